import { errors } from '../../errors';
import type { EmbeddingsRequest } from '../../types/embeddings';
import type { HttpEmbeddings } from '../embeddings';
import { numberList, textInputs } from '../embeddings-input';
import { bearer, joinUrl, upstreamHeaders } from '../shared/http';
import { isRecord } from '../shared';
import type { UpstreamTarget } from '../types';

/** Ollama: POST /api/embed {model, input, dimensions?} answering {embeddings:[[...]], prompt_eval_count}. */
export const ollamaEmbeddings: HttpEmbeddings = {
  kind: 'http',
  buildRequests(req: EmbeddingsRequest, target: UpstreamTarget) {
    const body: Record<string, unknown> = {
      model: target.deployment.model,
      input: textInputs(req, target.provider.name),
    };
    if (req.dimensions !== undefined) body.dimensions = req.dimensions;
    return [
      {
        url: joinUrl(target.provider.api_base ?? 'http://127.0.0.1:11434', '/api/embed'),
        method: 'POST',
        headers: upstreamHeaders(target, bearer(target.provider.api_key)),
        body: JSON.stringify(body),
      },
    ];
  },
  parseAnswers(answers, _req, provider) {
    const body = answers[0]?.body;
    if (!isRecord(body) || !Array.isArray(body.embeddings))
      throw errors.upstreamProtocol(provider, 'no embeddings in the answer');
    const vectors = body.embeddings.map((v: unknown) => {
      const n = numberList(v);
      if (!n) throw errors.upstreamProtocol(provider, 'an embedding was not a list of numbers');
      return n;
    });
    return { vectors, ...(typeof body.prompt_eval_count === 'number' ? { promptTokens: body.prompt_eval_count } : {}) };
  },
};
