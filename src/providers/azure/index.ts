import type { HttpProviderAdapter } from '../types';
import { parseOpenAIResponse } from '../openai/response';
import { createCompatibleTranslator } from '../openai/stream';
import { AZURE_PARAMS } from './params';
import { buildAzureRequest } from './request';
import { mapAzureError } from './errors';

export { AZURE_DEFAULT_API_VERSION } from './request';

/** Azure OpenAI: /openai/deployments/{deployment}/chat/completions?api-version=..., api-key header. */
export const azureAdapter: HttpProviderAdapter = {
  kind: 'http',
  type: 'azure',
  supportedParams: AZURE_PARAMS,
  forwardsUnknownParams: true,
  streamFormat: 'sse',
  buildRequest: buildAzureRequest,
  parseResponse: (body, ctx) => parseOpenAIResponse(body, ctx, 'azure'),
  createStreamTranslator: (ctx) => createCompatibleTranslator(ctx, 'azure'),
  mapError: mapAzureError,
};
