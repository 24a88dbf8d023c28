import { errors } from '../../errors';
import type { HttpEmbeddings } from '../embeddings';
import { textEmbeddingsBody, vectorsOf } from '../embeddings-input';
import { isRecord } from '../shared';
import { bearer, postJson } from '../shared/http';
import { OLLAMA_BASE } from './request';

/** Ollama: POST /api/embed {model, input, dimensions?} answering {embeddings:[[...]], prompt_eval_count}. */
export const ollamaEmbeddings: HttpEmbeddings = {
  kind: 'http',
  buildRequests(req, target) {
    const body = textEmbeddingsBody(req, target, 'input', 'dimensions');
    return [postJson(target, OLLAMA_BASE, '/api/embed', bearer(target.provider.api_key), body)];
  },
  parseAnswers(answers, _req, provider) {
    const body = answers[0]?.body;
    if (!isRecord(body) || !Array.isArray(body.embeddings))
      throw errors.upstreamProtocol(provider, 'no embeddings in the answer');
    const tokens = typeof body.prompt_eval_count === 'number' ? { promptTokens: body.prompt_eval_count } : {};
    return { vectors: vectorsOf(body.embeddings, provider), ...tokens };
  },
};
