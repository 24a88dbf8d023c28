import type { HttpProviderAdapter } from '../types';
import { OPENAI_PARAMS } from './params';
import { buildOpenAIRequest } from './request';
import { parseOpenAIResponse } from './response';
import { createOpenAITranslator } from './stream';
import { mapOpenAIError } from './errors';

export { OPENAI_PARAMS } from './params';

/** Any OpenAI-compatible upstream: OpenAI, vLLM, Groq, Together, DeepSeek, OpenRouter, LM Studio... */
export const openaiAdapter: HttpProviderAdapter = {
  kind: 'http',
  type: 'openai',
  supportedParams: OPENAI_PARAMS,
  forwardsUnknownParams: true,
  streamFormat: 'sse',
  buildRequest: buildOpenAIRequest,
  parseResponse: (body, ctx) => parseOpenAIResponse(body, ctx),
  createStreamTranslator: (ctx) => createOpenAITranslator(ctx),
  mapError: mapOpenAIError,
};
