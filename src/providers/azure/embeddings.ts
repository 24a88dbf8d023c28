import { errors } from '../../errors';
import type { EmbeddingsRequest } from '../../types/embeddings';
import type { HttpEmbeddings } from '../embeddings';
import { openaiEmbeddingsBody, parseOpenAIEmbeddings } from '../openai/embeddings';
import { joinUrl, upstreamHeaders } from '../openai/request';
import type { UpstreamTarget } from '../types';
import { AZURE_DEFAULT_API_VERSION } from './index';

/** Azure OpenAI: /openai/deployments/{deployment}/embeddings?api-version=..., api-key header, OpenAI's body without model. */
export const azureEmbeddings: HttpEmbeddings = {
  kind: 'http',
  buildRequests(req: EmbeddingsRequest, target: UpstreamTarget) {
    if (!target.provider.api_base)
      throw errors.upstreamUnavailable(
        target.provider.name,
        'an azure provider needs api_base (https://{resource}.openai.azure.com)',
      );
    const o = { ...target.provider.options, ...target.deployment.options };
    const version = encodeURIComponent(String(o.api_version ?? AZURE_DEFAULT_API_VERSION));
    return [
      {
        url: joinUrl(
          target.provider.api_base,
          `/openai/deployments/${encodeURIComponent(target.deployment.model)}/embeddings?api-version=${version}`,
        ),
        method: 'POST',
        headers: upstreamHeaders(target, { 'api-key': target.provider.api_key ?? '' }),
        body: JSON.stringify(openaiEmbeddingsBody(req, undefined)),
      },
    ];
  },
  parseAnswers: (answers, _req, provider) => parseOpenAIEmbeddings(answers, provider),
};
