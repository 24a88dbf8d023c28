import type { HttpEmbeddings } from '../embeddings';
import { openaiEmbeddingsBody, parseOpenAIEmbeddings } from '../openai/embeddings';
import { azurePost } from './request';

/** Azure OpenAI: /openai/deployments/{deployment}/embeddings?api-version=..., OpenAI's body without model. */
export const azureEmbeddings: HttpEmbeddings = {
  kind: 'http',
  buildRequests: (req, target) => [azurePost(target, 'embeddings', openaiEmbeddingsBody(req, undefined))],
  parseAnswers: (answers, _req, provider) => parseOpenAIEmbeddings(answers, provider),
};
