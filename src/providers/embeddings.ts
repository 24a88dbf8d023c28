import type { EmbeddingsRequest, EmbeddingsResult } from '../types/embeddings';
import type { UpstreamRequest, UpstreamTarget } from './types';
import { openaiEmbeddings } from './openai/embeddings';
import { azureEmbeddings } from './azure/embeddings';
import { geminiEmbeddings } from './gemini/embeddings';
import { mistralEmbeddings } from './mistral/embeddings';
import { cohereEmbeddings } from './cohere/embeddings';
import { bedrockEmbeddings } from './bedrock/embeddings';
import { ollamaEmbeddings } from './ollama/embeddings';
import { mockEmbeddings } from './mock/embeddings';

/** One upstream answer to an embeddings request (parsed JSON, or text). */
export interface UpstreamAnswer {
  body: unknown;
  headers: Record<string, string | string[] | undefined>;
}

/**
 * A provider's embeddings mapping: pure, like the chat adapters. Some upstreams take one
 * input per call (Bedrock Titan), so a request may become several upstream requests;
 * their answers come back in the same order. Errors are mapped by the chat adapter's mapError.
 */
export interface HttpEmbeddings {
  kind: 'http';
  buildRequests(req: EmbeddingsRequest, target: UpstreamTarget): UpstreamRequest[];
  parseAnswers(answers: UpstreamAnswer[], req: EmbeddingsRequest, provider: string): EmbeddingsResult;
}

/** An in-process provider (the mock). */
export interface LocalEmbeddings {
  kind: 'local';
  embed(req: EmbeddingsRequest, target: UpstreamTarget): EmbeddingsResult;
}

export type EmbeddingsMapping = HttpEmbeddings | LocalEmbeddings;

/** Embeddings mappings by provider type (anthropic has no embeddings API). */
const mappings = new Map<string, EmbeddingsMapping>([
  ['openai', openaiEmbeddings],
  ['azure', azureEmbeddings],
  ['gemini', geminiEmbeddings],
  ['mistral', mistralEmbeddings],
  ['cohere', cohereEmbeddings],
  ['bedrock', bedrockEmbeddings],
  ['ollama', ollamaEmbeddings],
  ['mock', mockEmbeddings],
]);

export function getEmbeddingsMapping(type: string): EmbeddingsMapping | undefined {
  return mappings.get(type);
}
