import type { HttpProviderAdapter } from '../types';
import { buildGeminiRequest } from './request';
import { createGeminiTranslator, mapGeminiError, parseGeminiResponse } from './response';

/** Google Gemini API (generateContent / streamGenerateContent?alt=sse, x-goog-api-key). */
export const geminiAdapter: HttpProviderAdapter = {
  kind: 'http',
  type: 'gemini',
  supportedParams: ['temperature', 'top_p', 'top_k', 'max_tokens', 'max_completion_tokens', 'stop', 'n', 'seed', 'presence_penalty', 'frequency_penalty', 'logprobs', 'top_logprobs', 'response_format', 'structured_outputs', 'tools', 'tool_choice', 'reasoning_effort', 'reasoning', 'stream', 'stream_options'],
  streamFormat: 'sse',
  buildRequest: buildGeminiRequest,
  parseResponse: parseGeminiResponse,
  createStreamTranslator: createGeminiTranslator,
  mapError: mapGeminiError,
};
