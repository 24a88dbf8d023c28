import { errors, upstreamStatusError, type GatewayError } from '../../errors';
import type { ChatCompletion, ChatCompletionChunk, ChatMessage, ChatRequest, FinishReason, ToolCall, Usage } from '../../types/openai';
import { bearer, joinUrl, upstreamHeaders } from '../shared/http';
import { retryAfterSeconds } from '../shared/http';
import { chunk, completion, isRecord, textOf, usage, usageChunk, parseEventJson, reasoningChunk } from '../shared';
import { reasoningAsk } from '../reasoning';
import type { AdapterContext, HttpProviderAdapter, StreamTranslator, UpstreamEvent, UpstreamRequest, UpstreamTarget } from '../types';

const FINISH: Record<string, FinishReason> = { COMPLETE: 'stop', STOP_SEQUENCE: 'stop', MAX_TOKENS: 'length', TOOL_CALL: 'tool_calls', ERROR: 'stop', TIMEOUT: 'stop' };

/** User content keeps its parts (text and image_url, which Cohere v2 takes in the same shape); other roles are text. */
function cohereContent(m: ChatMessage, role: string): unknown {
  if (role === 'user' && Array.isArray(m.content) && m.content.some((p) => p.type === 'image_url')) {
    return m.content.filter((p) => p.type === 'text' || p.type === 'image_url');
  }
  return textOf(m.content);
}

function cohereMessage(m: ChatMessage): Record<string, unknown> {
  const role = m.role === 'developer' ? 'system' : m.role === 'function' ? 'tool' : m.role;
  const content = cohereContent(m, role);
  const out: Record<string, unknown> = { role };
  // An assistant turn that only calls tools carries no content (Cohere refuses an empty one).
  if (!(m.tool_calls?.length && content === '')) out.content = content;
  if (m.tool_calls?.length) out.tool_calls = m.tool_calls.map((t) => ({ id: t.id, type: 'function', function: { name: t.function.name, arguments: t.function.arguments } }));
  if (role === 'tool') out.tool_call_id = m.tool_call_id ?? m.name;
  return out;
}

function buildCohereRequest(req: ChatRequest, target: UpstreamTarget, stream: boolean): UpstreamRequest {
  const body: Record<string, unknown> = { model: target.deployment.model, messages: req.messages.map(cohereMessage), stream };
  const set = (k: string, v: unknown) => v !== undefined && v !== null && (body[k] = v);
  set('temperature', req.temperature);
  set('p', req.top_p);
  set('k', req.top_k);
  set('max_tokens', req.max_completion_tokens ?? req.max_tokens);
  set('seed', req.seed);
  set('frequency_penalty', req.frequency_penalty);
  set('presence_penalty', req.presence_penalty);
  if (req.stop !== undefined && req.stop !== null) body.stop_sequences = Array.isArray(req.stop) ? req.stop : [req.stop];
  const forced = typeof req.tool_choice === 'object' && req.tool_choice ? req.tool_choice.function.name : undefined;
  // Cohere has no "this function" choice: a forced function is REQUIRED with only that tool offered.
  if (req.tools?.length) body.tools = forced ? req.tools.filter((t) => t.function.name === forced) : req.tools;
  if (req.tool_choice === 'required' || forced) body.tool_choice = 'REQUIRED';
  if (req.tool_choice === 'none') body.tool_choice = 'NONE';
  const ask = reasoningAsk(req);
  if (ask) body.thinking = ask.enabled ? { type: 'enabled', ...(ask.maxTokens ? { token_budget: ask.maxTokens } : {}) } : { type: 'disabled' };
  const rf = req.response_format;
  if (rf?.type === 'json_object') body.response_format = { type: 'json_object' };
  if (rf?.type === 'json_schema') body.response_format = { type: 'json_object', json_schema: (rf.json_schema as { schema?: unknown } | undefined)?.schema };
  return { url: joinUrl(target.provider.api_base ?? 'https://api.cohere.com', '/v2/chat'), method: 'POST', headers: upstreamHeaders(target, bearer(target.provider.api_key)), body: JSON.stringify(body) };
}

/** What Cohere bills (billed_units, else tokens), and its prompt-cache hits (cached_tokens). */
function cohereUsage(u: unknown): Usage {
  const t = isRecord(u) && isRecord(u.billed_units) ? u.billed_units : isRecord(u) && isRecord(u.tokens) ? u.tokens : {};
  const cached = isRecord(u) && typeof u.cached_tokens === 'number' ? u.cached_tokens : 0;
  return usage(Number(t.input_tokens ?? 0), Number(t.output_tokens ?? 0), cached);
}

function parseCohereResponse(body: unknown, ctx: AdapterContext): ChatCompletion {
  if (!isRecord(body) || !isRecord(body.message)) throw errors.upstreamProtocol(ctx.provider ?? 'cohere', 'no message in the answer');
  if (body.finish_reason === 'ERROR') throw cohereError(ctx.provider ?? 'cohere', 500, { message: 'the generation failed (finish_reason ERROR)' });
  const m = body.message;
  const parts = Array.isArray(m.content) ? (m.content as Array<Record<string, unknown>>) : [];
  const text = parts.map((c) => (c.type === 'text' ? String(c.text ?? '') : '')).join('');
  const thinking = parts.map((c) => (c.type === 'thinking' ? String(c.thinking ?? '') : '')).join('');
  const calls = (Array.isArray(m.tool_calls) ? (m.tool_calls as ToolCall[]) : []).map((t) => ({ id: t.id, type: 'function' as const, function: { name: t.function.name, arguments: t.function.arguments ?? '{}' } }));
  return completion(ctx, calls.length && !text ? null : text, calls, FINISH[String(body.finish_reason)] ?? 'stop', cohereUsage(body.usage), { text: thinking, details: [] });
}

function cohereError(provider: string, status: number, body: unknown, retryAfter?: number): GatewayError {
  const message = isRecord(body) && typeof body.message === 'string' ? body.message : typeof body === 'string' ? body.slice(0, 300) : '';
  return upstreamStatusError(provider, status, message, /too many tokens|context length/i.test(message) ? 'context_length_exceeded' : undefined, retryAfter);
}

/** Cohere v2 SSE: message-start, content-delta, tool-call-start/delta/end, message-end (finish_reason, usage). */
function createCohereTranslator(ctx: AdapterContext): StreamTranslator {
  let done = false;
  let calls = 0;
  return {
    get done() {
      return done;
    },
    push(ev: UpstreamEvent): ChatCompletionChunk[] {
      const d = parseEventJson(ev, ctx.provider ?? 'cohere') as Record<string, unknown>;
      const delta = isRecord(d.delta) ? d.delta : {};
      const msg = isRecord(delta.message) ? delta.message : {};
      switch (ev.event ?? d.type) {
        case 'message-start':
          return [chunk(ctx, { role: 'assistant', content: '' })];
        case 'content-delta': {
          const c = isRecord(msg.content) ? msg.content : {};
          if (typeof c.thinking === 'string') return reasoningChunk(ctx, c.thinking);
          return [chunk(ctx, { content: String(c.text ?? '') })];
        }
        case 'tool-call-start': {
          const t = msg.tool_calls as { id: string; function: { name: string; arguments?: string } };
          return [chunk(ctx, { tool_calls: [{ index: calls++, id: t.id, type: 'function', function: { name: t.function.name, arguments: t.function.arguments ?? '' } }] })];
        }
        case 'tool-call-delta': {
          const t = msg.tool_calls as { function: { arguments?: string } };
          return [chunk(ctx, { tool_calls: [{ index: calls - 1, function: { arguments: t.function.arguments ?? '' } }] })];
        }
        case 'message-end':
          // finish_reason ERROR: the generation failed upstream after the stream began.
          if (delta.finish_reason === 'ERROR') throw cohereError(ctx.provider ?? 'cohere', 500, { message: typeof delta.error === 'string' ? delta.error : 'the generation failed (finish_reason ERROR)' });
          done = true;
          return [chunk(ctx, {}, FINISH[String(delta.finish_reason)] ?? 'stop'), usageChunk(ctx, cohereUsage(delta.usage))];
        default:
          if (d.type === 'error' || ev.event === 'error') throw cohereError(ctx.provider ?? 'cohere', 500, d);
          return [];
      }
    },
    finish: () => [],
  };
}

/** Cohere v2 chat (/v2/chat, Bearer). */
export const cohereAdapter: HttpProviderAdapter = {
  kind: 'http',
  type: 'cohere',
  supportedParams: ['temperature', 'top_p', 'top_k', 'max_tokens', 'max_completion_tokens', 'seed', 'frequency_penalty', 'presence_penalty', 'stop', 'tools', 'tool_choice', 'response_format', 'reasoning_effort', 'reasoning', 'stream', 'stream_options'],
  streamFormat: 'sse',
  buildRequest: buildCohereRequest,
  parseResponse: parseCohereResponse,
  createStreamTranslator: createCohereTranslator,
  mapError: (status, body, headers, provider) => cohereError(provider, status, body, retryAfterSeconds(headers)),
};
