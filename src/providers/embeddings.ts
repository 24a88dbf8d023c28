import type { EmbeddingsRequest, EmbeddingsResult } from '../types/embeddings';
import type { UpstreamRequest, UpstreamTarget } from './types';

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

/**
 * Embeddings mappings by provider type (anthropic has no embeddings API), each loaded on
 * first use, like the chat adapters: a gateway without embeddings models loads none.
 */
const loaders: Record<string, () => EmbeddingsMapping> = {
  openai: () => (require('./openai/embeddings') as typeof import('./openai/embeddings')).openaiEmbeddings,
  azure: () => (require('./azure/embeddings') as typeof import('./azure/embeddings')).azureEmbeddings,
  gemini: () => (require('./gemini/embeddings') as typeof import('./gemini/embeddings')).geminiEmbeddings,
  mistral: () => (require('./mistral/embeddings') as typeof import('./mistral/embeddings')).mistralEmbeddings,
  cohere: () => (require('./cohere/embeddings') as typeof import('./cohere/embeddings')).cohereEmbeddings,
  bedrock: () => (require('./bedrock/embeddings') as typeof import('./bedrock/embeddings')).bedrockEmbeddings,
  ollama: () => (require('./ollama/embeddings') as typeof import('./ollama/embeddings')).ollamaEmbeddings,
  mock: () => (require('./mock/embeddings') as typeof import('./mock/embeddings')).mockEmbeddings,
};
const mappings = new Map<string, EmbeddingsMapping>();

export function getEmbeddingsMapping(type: string): EmbeddingsMapping | undefined {
  let m = mappings.get(type);
  if (m) return m;
  const load = Object.hasOwn(loaders, type) ? loaders[type] : undefined;
  if (!load) return undefined;
  m = load();
  mappings.set(type, m);
  return m;
}
