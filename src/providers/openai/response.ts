import { errors, upstreamStatusError, type GatewayError } from '../../errors';
import type { ChatCompletion, ChatCompletionChunk, ChatMessage, ChunkChoice } from '../../types/openai';
import type { AdapterContext, StreamTranslator, UpstreamEvent } from '../types';
import { isRecord, parseEventJson } from '../shared';

/** Finish reasons some OpenAI-compatible servers use under other names (Mistral's model_length). */
const FINISH_ALIASES: Record<string, string> = { model_length: 'length' };

/** Status of an error object sent inside a stream (which has no HTTP status of its own). */
const STREAM_ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400, rate_limit_error: 429, rate_limit_exceeded: 429, too_many_requests: 429,
  overloaded_error: 503, service_unavailable: 503, timeout: 504, context_length_exceeded: 400,
};

/** An `{"error": ...}` event mid-stream: its own code or type decides the status; otherwise an upstream stream error, not an invented 500. */
export function streamErrorOf(provider: string, body: Record<string, unknown>): GatewayError {
  const e = isRecord(body.error) ? body.error : {};
  const message = typeof e.message === 'string' ? e.message : typeof body.error === 'string' ? body.error : typeof body.message === 'string' ? body.message : '';
  const code = typeof e.code === 'number' ? e.code : Number.parseInt(String(e.code ?? ''), 10);
  const status = code >= 400 && code < 600 ? code : STREAM_ERROR_STATUS[String(e.type ?? e.code ?? '')];
  if (status === undefined) return errors.upstreamStreamError(provider, message);
  return upstreamStatusError(provider, status, message, e.code === 'context_length_exceeded' ? 'context_length_exceeded' : undefined);
}

/** Text of Mistral-style content chunks: `{type: text, text}` and `{type: thinking, thinking: [chunks]}`. */
function chunkText(parts: unknown[], type: 'text' | 'thinking'): string {
  return parts
    .filter(isRecord)
    .map((p) => (p.type !== type ? '' : type === 'text' ? String(p.text ?? '') : Array.isArray(p.thinking) ? chunkText(p.thinking, 'text') : String(p.thinking ?? '')))
    .join('');
}

/**
 * DeepSeek / vLLM call it reasoning_content, Mistral's reasoning models answer content
 * chunks with `thinking` parts: the gateway answers a string content and OpenRouter's `reasoning`.
 */
function normaliseReasoning(m: ChatMessage | ChunkChoice['delta'], exclude: boolean | undefined): void {
  if (typeof m.reasoning_content === 'string' && m.reasoning === undefined) m.reasoning = m.reasoning_content;
  delete m.reasoning_content;
  if (Array.isArray(m.content) && m.content.some((p) => isRecord(p) && p.type === 'thinking')) {
    const thinking = chunkText(m.content, 'thinking');
    m.content = chunkText(m.content, 'text');
    if (thinking) m.reasoning = `${typeof m.reasoning === 'string' ? m.reasoning : ''}${thinking}`;
  }
  if (exclude) {
    delete m.reasoning;
    delete m.reasoning_details;
  }
}

function finishOf(provider: string, f: unknown, message: string): ChatCompletion['choices'][number]['finish_reason'] {
  if (f === 'error') throw errors.upstreamStreamError(provider, message || 'the generation failed (finish_reason error)');
  return (typeof f === 'string' ? FINISH_ALIASES[f] ?? f : f) as ChatCompletion['choices'][number]['finish_reason'];
}

/** An OpenAI-shaped answer, with the gateway's id and the client's model name. */
export function parseOpenAIResponse(body: unknown, ctx: AdapterContext, provider = 'upstream'): ChatCompletion {
  const name = ctx.provider ?? provider;
  if (!isRecord(body) || !Array.isArray(body.choices)) throw errors.upstreamProtocol(name, 'no choices in the answer');
  for (const c of body.choices as ChatCompletion['choices']) {
    if (!isRecord(c)) continue;
    c.finish_reason = finishOf(name, c.finish_reason, '');
    if (isRecord(c.message)) normaliseReasoning(c.message, ctx.excludeReasoning);
  }
  return {
    ...(body as ChatCompletion),
    id: ctx.id,
    object: 'chat.completion',
    created: typeof body.created === 'number' ? body.created : ctx.created,
    model: ctx.model,
  };
}

/** OpenAI SSE: each `data:` is a chunk, `[DONE]` ends, `{"error":...}` is a mid-stream failure. */
export function createOpenAITranslator(ctx: AdapterContext, provider = 'upstream'): StreamTranslator {
  let done = false;
  const name = ctx.provider ?? provider;
  return {
    get done() {
      return done;
    },
    push(ev: UpstreamEvent): ChatCompletionChunk[] {
      if (ev.data === '[DONE]') {
        done = true;
        return [];
      }
      const parsed = parseEventJson(ev, name);
      if (!isRecord(parsed)) throw errors.upstreamProtocol(name, 'a stream event was not an object');
      if (parsed.error !== undefined && parsed.error !== null) throw streamErrorOf(name, parsed);
      if (!Array.isArray(parsed.choices)) throw errors.upstreamProtocol(name, 'a stream chunk had no choices');
      const chunk = parsed as ChatCompletionChunk;
      for (const c of chunk.choices) {
        if (!isRecord(c)) continue;
        if (c.finish_reason) c.finish_reason = finishOf(name, c.finish_reason, typeof c.delta?.content === 'string' ? c.delta.content : '');
        if (isRecord(c.delta)) normaliseReasoning(c.delta, ctx.excludeReasoning);
      }
      chunk.id = ctx.id;
      chunk.model = ctx.model;
      chunk.object = 'chat.completion.chunk';
      if (typeof chunk.created !== 'number') chunk.created = ctx.created;
      return [chunk];
    },
    finish: () => [],
  };
}
