import type { HttpProviderAdapter } from '../types';
import { buildOpenAIRequest } from './request';
import { parseOpenAIResponse, createOpenAITranslator } from './response';
import { mapOpenAIError } from './errors';

/** Parameters an OpenAI-compatible upstream accepts. */
export const OPENAI_PARAMS = [
  'temperature', 'top_p', 'seed', 'frequency_penalty', 'presence_penalty', 'max_tokens', 'max_completion_tokens',
  'stop', 'n', 'verbosity', 'response_format', 'tools', 'tool_choice', 'parallel_tool_calls', 'logit_bias',
  'logprobs', 'top_logprobs', 'user', 'stream', 'stream_options', 'reasoning_effort', 'modalities', 'audio',
  'prediction', 'service_tier', 'reasoning',
] as const;

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
