import type { HttpProviderAdapter } from '../types';
import { parseOpenAIResponse } from '../openai/response';
import { createCompatibleTranslator } from '../openai/stream';
import { MISTRAL_PARAMS } from './params';
import { buildMistralRequest } from './request';
import { mapMistralError } from './errors';

export { mistralBody, mistralToolId } from './request';

/** Mistral's chat API (/v1/chat/completions, Bearer): OpenAI's wire format with its own field names. */
export const mistralAdapter: HttpProviderAdapter = {
  kind: 'http',
  type: 'mistral',
  supportedParams: MISTRAL_PARAMS,
  streamFormat: 'sse',
  buildRequest: buildMistralRequest,
  parseResponse: (body, ctx) => parseOpenAIResponse(body, ctx, 'mistral'),
  createStreamTranslator: (ctx) => createCompatibleTranslator(ctx, 'mistral'),
  mapError: mapMistralError,
};
