import { errors } from '../../errors';
import type { EmbeddingsRequest, EmbeddingsResult } from '../../types/embeddings';
import type { HttpEmbeddings, UpstreamAnswer } from '../embeddings';
import { isRecord } from '../shared';
import { bearer, postJson } from '../shared/http';
import { OPENAI_BASE } from './request';

/** The OpenAI embeddings body: the gateway always asks for floats (it encodes base64 itself). */
export function openaiEmbeddingsBody(req: EmbeddingsRequest, model: string | undefined): Record<string, unknown> {
  return {
    ...(model === undefined ? {} : { model }),
    input: req.input,
    encoding_format: 'float',
    ...(req.dimensions === undefined ? {} : { dimensions: req.dimensions }),
    ...(req.user === undefined ? {} : { user: req.user }),
  };
}

/** `{data:[{index, embedding}], usage:{prompt_tokens}}` (OpenAI, Azure, Mistral and compatible servers). */
export function parseOpenAIEmbeddings(answers: UpstreamAnswer[], provider: string): EmbeddingsResult {
  const body = answers[0]?.body;
  if (!isRecord(body) || !Array.isArray(body.data))
    throw errors.upstreamProtocol(provider, 'no data in the embeddings answer');
  const vectors: number[][] = [];
  for (const [k, d] of (body.data as unknown[]).entries()) {
    if (!isRecord(d) || !Array.isArray(d.embedding))
      throw errors.upstreamProtocol(provider, 'an embedding was not a list of numbers');
    vectors[typeof d.index === 'number' ? d.index : k] = d.embedding as number[];
  }
  const u = isRecord(body.usage) ? body.usage.prompt_tokens : undefined;
  return { vectors, ...(typeof u === 'number' ? { promptTokens: u } : {}) };
}

export const openaiEmbeddings: HttpEmbeddings = {
  kind: 'http',
  buildRequests: (req, target) => {
    const body = openaiEmbeddingsBody(req, target.deployment.model);
    return [postJson(target, OPENAI_BASE, '/embeddings', bearer(target.provider.api_key), body)];
  },
  parseAnswers: (answers, _req, provider) => parseOpenAIEmbeddings(answers, provider),
};
