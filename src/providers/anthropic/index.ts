import type { HttpProviderAdapter } from '../types';
import { ANTHROPIC_PARAMS } from './params';
import { buildAnthropicRequest } from './request';
import { parseAnthropicResponse } from './response';
import { createAnthropicTranslator } from './stream';
import { mapAnthropicError } from './errors';
import { anthropicSameWire } from './same-wire';

/** Anthropic Messages API (/v1/messages, x-api-key + anthropic-version). */
export const anthropicAdapter: HttpProviderAdapter = {
  kind: 'http',
  type: 'anthropic',
  supportedParams: ANTHROPIC_PARAMS,
  streamFormat: 'sse',
  buildRequest: buildAnthropicRequest,
  parseResponse: parseAnthropicResponse,
  createStreamTranslator: createAnthropicTranslator,
  mapError: mapAnthropicError,
  // /v1/messages requests reach Anthropic as the client sent them (passthrough), their answers come back as sent.
  sameWire: { 'anthropic-messages': anthropicSameWire },
};
