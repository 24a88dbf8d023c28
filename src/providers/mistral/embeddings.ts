import type { HttpEmbeddings } from '../embeddings';
import { parseOpenAIEmbeddings } from '../openai/embeddings';
import { bearer, postJson } from '../shared/http';
import { textInputs } from '../embeddings-input';
import { MISTRAL_BASE } from './request';

/** Mistral: POST /v1/embeddings {model, input, output_dimension?}; the answer is OpenAI-shaped. Strings only. */
export const mistralEmbeddings: HttpEmbeddings = {
  kind: 'http',
  buildRequests(req, target) {
    const body: Record<string, unknown> = {
      model: target.deployment.model,
      input: textInputs(req, target.provider.name),
    };
    if (req.dimensions !== undefined) body.output_dimension = req.dimensions;
    return [postJson(target, MISTRAL_BASE, '/v1/embeddings', bearer(target.provider.api_key), body)];
  },
  parseAnswers: (answers, _req, provider) => parseOpenAIEmbeddings(answers, provider),
};
