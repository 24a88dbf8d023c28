import { createHash } from 'node:crypto';
import { upstreamStatusError, type GatewayError } from '../../errors';
import type { ChatMessage, ChatRequest } from '../../types/openai';
import type { HttpProviderAdapter, UpstreamRequest, UpstreamTarget } from '../types';
import { bearer, buildOpenAIBody, joinUrl, upstreamHeaders } from '../openai/request';
import { parseOpenAIResponse } from '../openai/response';
import { mapOpenAIError, retryAfterSeconds } from '../openai/errors';
import { isRecord } from '../shared';

const MISTRAL_ID = /^[a-zA-Z0-9]{9}$/;

/**
 * Mistral accepts only 9-character alphanumeric tool-call ids; ids made elsewhere (another
 * provider, a fallback, the client) are mapped to one deterministically, the same on the
 * assistant call and on the tool result that answers it.
 */
export function mistralToolId(id: string): string {
  if (MISTRAL_ID.test(id)) return id;
  return createHash('sha256').update(id).digest('base64').replace(/[^a-zA-Z0-9]/g, '').slice(0, 9).padEnd(9, '0');
}

/**
 * Mistral refuses any message field it does not define: only role, content, tool_calls
 * (assistant), tool_call_id and name (tool) and prefix (assistant) go; OpenAI's `name` on
 * user messages and the SDK's `refusal` / `parsed` / reasoning fields are left out.
 */
function mistralMessage(m: ChatMessage): Record<string, unknown> {
  const role = m.role === 'developer' ? 'system' : m.role === 'function' ? 'tool' : m.role;
  const out: Record<string, unknown> = { role, content: m.content ?? null };
  if (role === 'assistant') {
    if (m.tool_calls?.length) out.tool_calls = m.tool_calls.map((t) => ({ id: mistralToolId(t.id), type: 'function', function: { name: t.function.name, arguments: t.function.arguments } }));
    if (typeof m.prefix === 'boolean') out.prefix = m.prefix;
  }
  if (role === 'tool') {
    const id = m.tool_call_id ?? m.name;
    if (typeof id === 'string') out.tool_call_id = mistralToolId(id);
    if (typeof m.name === 'string') out.name = m.name;
  }
  return out;
}

function mistralMessages(messages: ChatMessage[]): Array<Record<string, unknown>> {
  return messages.map(mistralMessage);
}

/** Mistral's errors: `{message: string | {detail: [...]}, type, code}` (422 validation), or OpenAI's `{error:{...}}`. */
function mapMistralError(status: number, body: unknown, headers: Record<string, string | string[] | undefined>, provider: string): GatewayError {
  if (isRecord(body) && body.error === undefined && isRecord(body.message)) {
    const detail = Array.isArray(body.message.detail) ? (body.message.detail as Array<Record<string, unknown>>) : [];
    const text = detail.map((d) => `${Array.isArray(d.loc) ? d.loc.join('.') : ''}: ${String(d.msg ?? '')}`).join('; ');
    return upstreamStatusError(provider, status, text || 'invalid request', undefined, retryAfterSeconds(headers));
  }
  return mapOpenAIError(status, body, headers, provider);
}
import { createCompatibleTranslator } from '../openai/compatible';

const MISTRAL_PARAMS = [
  'temperature', 'top_p', 'max_tokens', 'max_completion_tokens', 'stop', 'n', 'seed', 'random_seed', 'presence_penalty',
  'frequency_penalty', 'response_format', 'tools', 'tool_choice', 'parallel_tool_calls', 'safe_prompt', 'prediction',
  'prompt_mode',
];

/** OpenAI's body with Mistral's own names: random_seed, tool_choice "any", safe_prompt passed on. */
export function mistralBody(req: ChatRequest, target: UpstreamTarget, stream: boolean): Record<string, unknown> {
  const all = buildOpenAIBody(req, target, stream);
  // Mistral refuses fields it does not define (422 extra_forbidden): only the ones it takes go.
  const body: Record<string, unknown> = { model: all.model };
  for (const k of [...MISTRAL_PARAMS, 'stream']) if (all[k] !== undefined) body[k] = all[k];
  body.messages = mistralMessages(req.messages);
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
  supportedParams: [...MISTRAL_PARAMS, 'stream_options'],
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
  mapError: mapMistralError,
};
