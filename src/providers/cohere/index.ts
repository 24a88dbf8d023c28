import type { HttpProviderAdapter } from '../types';
import { COHERE_PARAMS } from './params';
import { buildCohereRequest } from './request';
import { parseCohereResponse } from './response';
import { createCohereTranslator } from './stream';
import { mapCohereError } from './errors';

/** Cohere v2 chat (/v2/chat, Bearer). */
export const cohereAdapter: HttpProviderAdapter = {
  kind: 'http',
  type: 'cohere',
  supportedParams: COHERE_PARAMS,
  streamFormat: 'sse',
  buildRequest: buildCohereRequest,
  parseResponse: parseCohereResponse,
  createStreamTranslator: createCohereTranslator,
  mapError: mapCohereError,
};
