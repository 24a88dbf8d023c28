import type { EmbeddingsRequest } from '../../types/embeddings';
import type { HttpEmbeddings } from '../embeddings';
import { parseOpenAIEmbeddings } from '../openai/embeddings';
import { bearer, joinUrl, upstreamHeaders } from '../openai/request';
import type { UpstreamTarget } from '../types';
import { textInputs } from '../embeddings-input';

/** Mistral: POST /v1/embeddings {model, input, output_dimension?}; the answer is OpenAI-shaped. Strings only. */
export const mistralEmbeddings: HttpEmbeddings = {
  kind: 'http',
  buildRequests(req: EmbeddingsRequest, target: UpstreamTarget) {
    const body: Record<string, unknown> = {
      model: target.deployment.model,
      input: textInputs(req, target.provider.name),
    };
    if (req.dimensions !== undefined) body.output_dimension = req.dimensions;
    return [
      {
        url: joinUrl(target.provider.api_base ?? 'https://api.mistral.ai', '/v1/embeddings'),
        method: 'POST',
        headers: upstreamHeaders(target, bearer(target.provider.api_key)),
        body: JSON.stringify(body),
      },
    ];
  },
  parseAnswers: (answers, _req, provider) => parseOpenAIEmbeddings(answers, provider),
};
