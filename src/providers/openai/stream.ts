import { errors, upstreamStatusError, type GatewayError } from '../../errors';
import type { ChatCompletionChunk } from '../../types/openai';
import type { AdapterContext, StreamTranslator, UpstreamEvent } from '../types';
import { isRecord, parseEventJson } from '../shared';
import { finishOf, normaliseReasoning } from './response';
import { PassthroughReader } from './passthrough';

/** Status of an error object sent inside a stream (which has no HTTP status of its own). */
const STREAM_ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  rate_limit_error: 429,
  rate_limit_exceeded: 429,
  too_many_requests: 429,
  overloaded_error: 503,
  service_unavailable: 503,
  timeout: 504,
  context_length_exceeded: 400,
};

/**
 * An `{"error": ...}` event mid-stream: its own code or type decides the status; otherwise
 * an upstream stream error, not an invented 500.
 */
export function streamErrorOf(provider: string, body: Record<string, unknown>): GatewayError {
  const e = isRecord(body.error) ? body.error : {};
  const message =
    typeof e.message === 'string'
      ? e.message
      : typeof body.error === 'string'
        ? body.error
        : typeof body.message === 'string'
          ? body.message
          : '';
  const code = typeof e.code === 'number' ? e.code : Number.parseInt(String(e.code ?? ''), 10);
  const status = code >= 400 && code < 600 ? code : STREAM_ERROR_STATUS[String(e.type ?? e.code ?? '')];
  if (status === undefined) return errors.upstreamStreamError(provider, message);
  const context = e.code === 'context_length_exceeded' ? 'context_length_exceeded' : undefined;
  return upstreamStatusError(provider, status, message, context);
}

/**
 * OpenAI SSE: each `data:` is a chunk, `[DONE]` ends, `{"error":...}` is a mid-stream failure. A class, not an object
 * literal with a `done` getter: V8 keeps such a literal as a dictionary (slow properties), one made per stream.
 * A content chunk is read without a parse and carries its passthrough frame (./passthrough.ts); the rest, and such a
 * chunk when the stream cannot pass through, are parsed and translated whole (`full`).
 */
class OpenAITranslator implements StreamTranslator {
  done = false;
  private readonly name: string;
  private readonly passthrough: PassthroughReader;

  constructor(
    private readonly ctx: AdapterContext,
    provider: string,
  ) {
    this.name = ctx.provider ?? provider;
    const ids = { id: ctx.id, model: ctx.model, modelJson: JSON.stringify(ctx.model).slice(1, -1) };
    this.passthrough = new PassthroughReader(ids, (data) => this.translate({ data }));
  }

  push(ev: UpstreamEvent): ChatCompletionChunk[] {
    if (ev.data === '[DONE]') {
      this.done = true;
      return [];
    }
    return [this.passthrough.read(ev.data) ?? this.translate(ev)];
  }

  /** One read's chunks; its text chunks read by their template join as runs (StreamTranslator.pushEvents). */
  pushEvents(events: UpstreamEvent[], out: ChatCompletionChunk[]): void {
    const reader = this.passthrough;
    reader.endRun();
    for (let i = 0; i < events.length; i++) {
      const ev = events[i];
      if (ev.data === '[DONE]') {
        this.done = true;
        reader.endRun();
        continue;
      }
      const c = reader.read(ev.data, true);
      if (c !== null) out.push(c ?? this.translate(ev));
    }
  }

  /**
   * The whole chunk: parsed, checked, its finish reasons and reasoning in OpenAI's names, the gateway's id and
   * model.
   */
  private translate(ev: UpstreamEvent): ChatCompletionChunk {
    const { ctx, name } = this;
    const parsed = parseEventJson(ev, name);
    if (!isRecord(parsed)) throw errors.upstreamProtocol(name, 'a stream event was not an object');
    if (parsed.error !== undefined && parsed.error !== null) throw streamErrorOf(name, parsed);
    if (!Array.isArray(parsed.choices)) throw errors.upstreamProtocol(name, 'a stream chunk had no choices');
    const chunk = parsed as ChatCompletionChunk;
    for (const c of chunk.choices) {
      if (!isRecord(c)) continue;
      const text = typeof c.delta?.content === 'string' ? c.delta.content : '';
      if (c.finish_reason) c.finish_reason = finishOf(name, c.finish_reason, text);
      if (isRecord(c.delta)) normaliseReasoning(c.delta, ctx.excludeReasoning);
    }
    chunk.id = ctx.id;
    chunk.model = ctx.model;
    chunk.object = 'chat.completion.chunk';
    if (typeof chunk.created !== 'number') chunk.created = ctx.created;
    return chunk;
  }

  finish(): ChatCompletionChunk[] {
    return [];
  }
}

export function createOpenAITranslator(ctx: AdapterContext, provider = 'upstream'): StreamTranslator {
  return new OpenAITranslator(ctx, provider);
}

/**
 * The OpenAI translator for upstreams that speak OpenAI's stream with small differences:
 * usage on the finish chunk (Mistral) is split into its own usage chunk, chunks with no
 * choices and no usage (Azure's prompt_filter_results) are dropped, a missing tool-call
 * index is filled in, and `[DONE]` may be absent when a finish and usage came (Mistral).
 */
class CompatibleTranslator implements StreamTranslator {
  private readonly inner: OpenAITranslator;
  private finished = false;
  private sawUsage = false;
  private readonly seenCalls: number[] = [];

  constructor(
    private readonly ctx: AdapterContext,
    private readonly provider: string,
  ) {
    this.inner = new OpenAITranslator(ctx, provider);
  }

  get done(): boolean {
    return this.inner.done || (this.finished && this.sawUsage);
  }

  push(ev: UpstreamEvent): ChatCompletionChunk[] {
    const out: ChatCompletionChunk[] = [];
    this.amend(this.inner.push(ev), out);
    return out;
  }

  /** One read's chunks, runs included (StreamTranslator.pushEvents): a run is text alone, which nothing here changes. */
  pushEvents(events: UpstreamEvent[], out: ChatCompletionChunk[]): void {
    const chunks: ChatCompletionChunk[] = [];
    try {
      this.inner.pushEvents(events, chunks);
    } finally {
      this.amend(chunks, out);
    }
  }

  /** The inner translator's chunks as this upstream's stream needs them, into `out`. */
  private amend(chunks: ChatCompletionChunk[], out: ChatCompletionChunk[]): void {
    const seenCalls = this.seenCalls;
    for (const c of chunks) {
      if (c.choices.length === 0) {
        if (c.usage) {
          this.sawUsage = true;
          out.push(c);
        }
        continue;
      }
      for (const ch of c.choices) {
        const calls = ch.delta.tool_calls;
        calls?.forEach((t, k) => {
          if (typeof t.index !== 'number') t.index = (seenCalls[ch.index] ?? 0) + k;
        });
        if (calls?.length) seenCalls[ch.index] = Math.max(seenCalls[ch.index] ?? 0, ...calls.map((t) => t.index + 1));
        if (ch.finish_reason) this.finished = true;
      }
      const usage = c.usage;
      if (usage && c.choices.length > 0) {
        c.usage = null;
        out.push(c, {
          id: c.id,
          object: 'chat.completion.chunk',
          created: c.created,
          model: c.model,
          choices: [],
          usage,
        });
        this.sawUsage = true;
      } else out.push(c);
    }
  }

  finish(): ChatCompletionChunk[] {
    if (!this.inner.done && !this.finished) {
      throw errors.streamInterrupted(
        this.ctx.provider ?? this.provider,
        'the upstream closed the stream without finishing it',
      );
    }
    return [];
  }
}

export function createCompatibleTranslator(ctx: AdapterContext, provider: string): StreamTranslator {
  return new CompatibleTranslator(ctx, provider);
}
