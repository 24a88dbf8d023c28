import type { ChatRequest } from '../../types/openai';
import type { HttpProviderAdapter, UpstreamRequest, UpstreamTarget } from '../types';
import { bearer, buildOpenAIBody, joinUrl, upstreamHeaders } from '../openai/request';
import { parseOpenAIResponse } from '../openai/response';
import { mapOpenAIError } from '../openai/errors';
import { createCompatibleTranslator } from '../openai/compatible';

/** OpenAI's body with Mistral's own names: random_seed, tool_choice "any", safe_prompt passed on. */
export function mistralBody(req: ChatRequest, target: UpstreamTarget, stream: boolean): Record<string, unknown> {
  const body = buildOpenAIBody(req, target, stream);
  if (body.seed !== undefined) {
    body.random_seed = body.seed;
    delete body.seed;
  }
  if (body.tool_choice === 'required') body.tool_choice = 'any';
  if (body.max_completion_tokens !== undefined && body.max_tokens === undefined) {
    body.max_tokens = body.max_completion_tokens;
    delete body.max_completion_tokens;
  }
  if (stream) delete body.stream_options; // Mistral sends usage on the last chunk by itself
  return body;
}

export const mistralAdapter: HttpProviderAdapter = {
  kind: 'http',
  type: 'mistral',
  supportedParams: ['temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'stop', 'n', 'seed', 'random_seed', 'presence_penalty', 'frequency_penalty', 'response_format', 'tools', 'tool_choice', 'parallel_tool_calls', 'safe_prompt', 'prediction', 'stream', 'stream_options'],
  streamFormat: 'sse',
  buildRequest(req: ChatRequest, target: UpstreamTarget, stream: boolean): UpstreamRequest {
    return {
      url: joinUrl(target.provider.api_base ?? 'https://api.mistral.ai', '/v1/chat/completions'),
      method: 'POST',
      headers: upstreamHeaders(target, bearer(target.provider.api_key)),
      body: JSON.stringify(mistralBody(req, target, stream)),
    };
  },
  parseResponse: (body, ctx) => parseOpenAIResponse(body, ctx, 'mistral'),
  createStreamTranslator: (ctx) => createCompatibleTranslator(ctx, 'mistral'),
  mapError: mapOpenAIError,
};
