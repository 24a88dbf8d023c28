import type { HttpProviderAdapter } from '../types';
import { OLLAMA_PARAMS, ollamaUnsupported } from './params';
import { buildOllamaRequest } from './request';
import { parseOllamaResponse } from './response';
import { createOllamaTranslator } from './stream';
import { ollamaError } from './errors';

export { ollamaUnsupported } from './params';

/** Ollama: /api/chat (NDJSON stream), or /api/generate with a raw prompt built from the prompt-template fields. */
export const ollamaAdapter: HttpProviderAdapter = {
  kind: 'http',
  type: 'ollama',
  supportedParams: OLLAMA_PARAMS,
  unsupportedValues: ollamaUnsupported,
  streamFormat: 'ndjson',
  buildRequest: buildOllamaRequest,
  parseResponse: parseOllamaResponse,
  createStreamTranslator: createOllamaTranslator,
  mapError: (status, body, _headers, provider) => ollamaError(provider, status, body),
};
