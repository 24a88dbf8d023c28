import { errors, GatewayError } from '../../src/errors';
import type { Attempt } from '../../src/pipeline/state';
import type { Transport } from '../../src/transport/http';
import { getAdapter } from '../../src/providers/registry';
import type { AdapterContext, HttpProviderAdapter, UpstreamEvent, UpstreamTarget } from '../../src/providers/types';
import { NdjsonParser, SseParser, type EventParser } from '../../src/transport/sse';
import { AwsEventStreamParser } from '../../src/transport/aws-eventstream';
import type { ChatCompletion, ChatCompletionChunk } from '../../src/types/openai';
import type { PromptOptions } from '../../src/prompt/index';

export interface CallOptions {
  signal: AbortSignal;
  /** Time allowed to the upstream's response headers. */
  headersTimeoutMs: number;
  /** Longest silence between streamed chunks. */
  idleTimeoutMs: number;
  extraHeaders?: Record<string, string>;
  promptOptions?: PromptOptions;
}

export function target(a: Attempt, opts: CallOptions): UpstreamTarget {
  const t: UpstreamTarget = { provider: a.provider, deployment: a.deployment };
  if (opts.extraHeaders) t.extraHeaders = opts.extraHeaders;
  if (opts.promptOptions) t.promptOptions = opts.promptOptions;
  return t;
}

export async function readBody(body: AsyncIterable<unknown> & { text(): Promise<string> }): Promise<unknown> {
  const text = await body.text();
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** One plain (non-streaming) upstream call. */
export async function callPlain(a: Attempt, transport: Transport, ctx: AdapterContext, opts: CallOptions): Promise<ChatCompletion> {
  const adapter = getAdapter(a.provider.type);
  if (adapter.kind === 'local') return adapter.complete(a.request, target(a, opts), ctx, opts.signal);
  const req = adapter.buildRequest(a.request, target(a, opts), false);
  const res = await transport.send(req, a.provider, { signal: opts.signal, headersTimeoutMs: opts.headersTimeoutMs, bodyTimeoutMs: opts.idleTimeoutMs });
  let body: unknown;
  try {
    body = await readBody(res.body);
  } catch (e) {
    throw mapReadError(e, a.provider.name, opts.signal);
  }
  if (res.status >= 400) throw adapter.mapError(res.status, body, res.headers, a.provider.name);
  if (typeof body === 'string') throw errors.upstreamProtocol(a.provider.name, 'the answer was not JSON');
  return adapter.parseResponse(body, ctx);
}

/** One streaming upstream call, as OpenAI chunks; errors before the first chunk throw from the first next(). */
export async function* callStream(a: Attempt, transport: Transport, ctx: AdapterContext, opts: CallOptions): AsyncGenerator<ChatCompletionChunk> {
  const adapter = getAdapter(a.provider.type);
  if (adapter.kind === 'local') {
    yield* adapter.stream(a.request, target(a, opts), ctx, opts.signal);
    return;
  }
  const req = adapter.buildRequest(a.request, target(a, opts), true);
  const res = await transport.send(req, a.provider, { signal: opts.signal, headersTimeoutMs: opts.headersTimeoutMs, bodyTimeoutMs: opts.idleTimeoutMs });
  if (res.status >= 400) {
    let body: unknown;
    try {
      body = await readBody(res.body);
    } catch (e) {
      throw mapReadError(e, a.provider.name, opts.signal);
    }
    throw adapter.mapError(res.status, body, res.headers, a.provider.name);
  }
  yield* translate(adapter, res.body, ctx, a.provider.name, opts.signal);
}

async function* translate(adapter: HttpProviderAdapter, body: AsyncIterable<unknown>, ctx: AdapterContext, provider: string, signal: AbortSignal): AsyncGenerator<ChatCompletionChunk> {
  const parser: EventParser = adapter.streamFormat === 'ndjson' ? new NdjsonParser() : adapter.streamFormat === 'aws-eventstream' ? new AwsEventStreamParser() : new SseParser();
  const translator = adapter.createStreamTranslator(ctx);
  const events: UpstreamEvent[] = [];
  try {
    for await (const bytes of body) {
      parser.push(bytes as Uint8Array, events);
      for (let i = 0; i < events.length; i++) yield* translator.push(events[i]);
      events.length = 0;
    }
    parser.end(events);
    for (const ev of events) yield* translator.push(ev);
  } catch (e) {
    throw mapReadError(e, provider, signal);
  }
  yield* translator.finish();
  if (!translator.done) throw errors.streamInterrupted(provider, 'the upstream closed the stream without finishing it');
}

export function mapReadError(e: unknown, provider: string, signal: AbortSignal): GatewayError {
  if (e instanceof GatewayError) return e;
  if (signal.aborted && signal.reason instanceof GatewayError) return signal.reason;
  const name = (e as { name?: string; code?: string }).code ?? (e as Error).name;
  if (name === 'UND_ERR_BODY_TIMEOUT' || name === 'BodyTimeoutError') return errors.upstreamTimeout(provider);
  return errors.streamInterrupted(provider, name ?? 'read failed');
}
