import type { HttpProviderAdapter } from '../types';
import { GEMINI_PARAMS } from './params';
import { buildGeminiRequest } from './request';
import { parseGeminiResponse } from './response';
import { createGeminiTranslator } from './stream';
import { mapGeminiError } from './errors';

/** Google Gemini API (generateContent / streamGenerateContent?alt=sse, x-goog-api-key). */
export const geminiAdapter: HttpProviderAdapter = {
  kind: 'http',
  type: 'gemini',
  supportedParams: GEMINI_PARAMS,
  streamFormat: 'sse',
  buildRequest: buildGeminiRequest,
  parseResponse: parseGeminiResponse,
  createStreamTranslator: createGeminiTranslator,
  mapError: mapGeminiError,
};
