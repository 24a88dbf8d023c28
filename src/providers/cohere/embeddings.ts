import { errors } from '../../errors';
import type { HttpEmbeddings } from '../embeddings';
import { textEmbeddingsBody, vectorsOf } from '../embeddings-input';
import { bearer, postJson, targetOptions } from '../shared/http';
import { isRecord } from '../shared';
import type { UpstreamTarget } from '../types';
import { COHERE_BASE } from './request';

/** Cohere's `input_type` (required by embed v3+): deployment/provider option, default search_document. */
export function cohereInputType(target: UpstreamTarget): string {
  const o = targetOptions(target);
  return typeof o.input_type === 'string' ? o.input_type : 'search_document';
}

/** `{embeddings:{float:[[...]]}}` (v2, or Bedrock with embedding_types) or `{embeddings:[[...]]}` (v1 style). */
export function cohereVectors(body: unknown, provider: string): number[][] {
  const e = isRecord(body) ? body.embeddings : undefined;
  const list = isRecord(e) ? e.float : e;
  if (!Array.isArray(list)) throw errors.upstreamProtocol(provider, 'no float embeddings in the answer');
  return vectorsOf(list, provider);
}

/** Cohere embed v2: POST /v2/embed {model, texts, input_type, embedding_types:[float], output_dimension?}. */
export const cohereEmbeddings: HttpEmbeddings = {
  kind: 'http',
  buildRequests(req, target) {
    const extra = { input_type: cohereInputType(target), embedding_types: ['float'] };
    const body = textEmbeddingsBody(req, target, 'texts', 'output_dimension', extra);
    return [postJson(target, COHERE_BASE, '/v2/embed', bearer(target.provider.api_key), body)];
  },
  parseAnswers(answers, _req, provider) {
    const body = answers[0]?.body;
    const billed =
      isRecord(body) && isRecord(body.meta) && isRecord(body.meta.billed_units)
        ? body.meta.billed_units.input_tokens
        : undefined;
    return { vectors: cohereVectors(body, provider), ...(typeof billed === 'number' ? { promptTokens: billed } : {}) };
  },
};
