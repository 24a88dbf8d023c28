import type { HttpProviderAdapter } from '../types';
import { buildAnthropicRequest } from './request';
import { createAnthropicTranslator, mapAnthropicError, parseAnthropicResponse } from './response';

/** Anthropic Messages API (/v1/messages, x-api-key + anthropic-version). */
export const anthropicAdapter: HttpProviderAdapter = {
  kind: 'http',
  type: 'anthropic',
  supportedParams: ['temperature', 'top_p', 'top_k', 'max_tokens', 'max_completion_tokens', 'stop', 'tools', 'tool_choice', 'parallel_tool_calls', 'response_format', 'structured_outputs', 'user', 'reasoning_effort', 'reasoning', 'stream', 'stream_options'],
  streamFormat: 'sse',
  buildRequest: buildAnthropicRequest,
  parseResponse: parseAnthropicResponse,
  createStreamTranslator: createAnthropicTranslator,
  mapError: mapAnthropicError,
};
