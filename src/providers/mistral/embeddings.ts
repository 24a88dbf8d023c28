import type { HttpEmbeddings } from '../embeddings';
import { parseOpenAIEmbeddings } from '../openai/embeddings';
import { bearer, postJson } from '../shared/http';
import { textEmbeddingsBody } from '../embeddings-input';
import { MISTRAL_BASE } from './request';

/** Mistral: POST /v1/embeddings {model, input, output_dimension?}; the answer is OpenAI-shaped. Strings only. */
export const mistralEmbeddings: HttpEmbeddings = {
  kind: 'http',
  buildRequests(req, target) {
    const body = textEmbeddingsBody(req, target, 'input', 'output_dimension');
    return [postJson(target, MISTRAL_BASE, '/v1/embeddings', bearer(target.provider.api_key), body)];
  },
  parseAnswers: (answers, _req, provider) => parseOpenAIEmbeddings(answers, provider),
};
