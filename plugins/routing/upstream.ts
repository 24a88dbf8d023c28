import {
  AwsEventStreamParser,
  errors,
  GatewayError,
  getAdapter,
  isGatewayError,
  NdjsonParser,
  providerSecrets,
  redactSecrets,
  SizeLimitError,
  SseParser,
  type AbortLike,
  type AdapterContext,
  type Attempt,
  type ChatCompletion,
  type ChunkSource,
  type EventParser,
  type HttpProviderAdapter,
  type PromptOptions,
  type RequestAbort,
  type SameWire,
  type SameWireRequest,
  type Transport,
  type UpstreamRequest,
  type UpstreamResponse,
  type UpstreamTarget,
} from '../../src/plugin';
import { sanitizeError } from './upstream-error';
import { SameWireChunks, UpstreamChunks } from './upstream-chunks';

export interface CallOptions {
  /** The attempt's abort: undici's signal as it is; `.signal` makes an AbortSignal for a local adapter. */
  abort: RequestAbort;
  /** Time allowed to the upstream's response headers. */
  headersTimeoutMs: number;
  /** Longest silence between streamed chunks. */
  idleTimeoutMs: number;
  extraHeaders?: Record<string, string>;
  promptOptions?: PromptOptions;
  limits: UpstreamLimits;
  /** Where an upstream's error body goes (already redacted), for the operator. */
  logError?: (provider: string, status: number, text: string) => void;
}

export interface UpstreamLimits {
  maxResponseBytes: number;
  maxEventBytes: number;
}

export function target(a: Attempt, opts: CallOptions): UpstreamTarget {
  const t: UpstreamTarget = { provider: a.provider, deployment: a.deployment };
  if (opts.extraHeaders) t.extraHeaders = opts.extraHeaders;
  if (opts.promptOptions) t.promptOptions = opts.promptOptions;
  return t;
}

/**
 * An upstream body, at most `limit` bytes (an announced Content-Length beyond it fails
 * before reading; a body that grows past it is cut off there): JSON when it parses, else text.
 * Read in flowing mode: each socket read is its own turn of the event loop and its chunk is
 * kept as it came (no re-concatenation while reading).
 */
export function readBody(res: UpstreamResponse, limit: number): Promise<unknown> {
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    res.body.destroy();
    return Promise.reject(new SizeLimitError('an answer', limit));
  }
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    res.body.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        parts.length = 0;
        reject(new SizeLimitError('an answer', limit));
        res.body.destroy();
        return;
      }
      parts.push(chunk);
    });
    // Each comes at most once for this body: `on` spares the wrappers `once` makes.
    res.body.on('error', reject);
    res.body.on('end', () => resolve(jsonOrText(Buffer.concat(parts))));
  });
}

/**
 * The adapter's error for an upstream's error answer (its body read: JSON when it parses, else text), with
 * credentials removed; the raw text is logged after the same redaction.
 */
function upstreamFailure(
  adapter: HttpProviderAdapter,
  a: Attempt,
  status: number,
  headers: UpstreamResponse['headers'],
  body: unknown,
  opts: CallOptions,
): GatewayError {
  const secrets = providerSecrets(a.provider);
  opts.logError?.(
    a.provider.name,
    status,
    redactSecrets((typeof body === 'string' ? body : JSON.stringify(body)).slice(0, 2000), secrets),
  );
  return sanitizeError(adapter.mapError(status, body, headers, a.provider.name), secrets);
}

/** Error answers are short; a bigger one is not read further. */
const ERROR_BODY_LIMIT = 1024 * 1024;

/** The most bytes of an answer of this status read: `max`, and ERROR_BODY_LIMIT at most for an error answer. */
function answerLimit(status: number, max: number): number {
  return status >= 400 ? Math.min(max, ERROR_BODY_LIMIT) : max;
}

/** An error answer's body, read from its stream, then the adapter's error for it. */
async function streamFailure(
  adapter: HttpProviderAdapter,
  a: Attempt,
  res: UpstreamResponse,
  opts: CallOptions,
): Promise<GatewayError> {
  let body: unknown;
  try {
    body = await readBody(res, answerLimit(res.status, opts.limits.maxResponseBytes));
  } catch (e) {
    throw mapReadError(e, a.provider.name, opts.abort);
  }
  return upstreamFailure(adapter, a, res.status, res.headers, body, opts);
}

/** Bytes of an answer as JSON when they parse, else as text. */
function jsonOrText(bytes: Buffer): unknown {
  const text = bytes.toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** One plain (non-streaming) upstream call. Not an async function (docs/decisions/0032-plugin-hot-path-shapes.md). */
export function callPlain(
  a: Attempt,
  transport: Transport,
  ctx: AdapterContext,
  opts: CallOptions,
): Promise<ChatCompletion> {
  const adapter = getAdapter(a.provider.type);
  if (adapter.kind === 'local') return adapter.complete(a.request, target(a, opts), ctx, opts.abort.signal);
  const req = adapter.buildRequest(a.request, target(a, opts), false);
  return sendForJson(adapter, a, req, transport, opts).then(({ body }) => adapter.parseResponse(body, ctx));
}

/**
 * Send one upstream request and read its JSON answer: an error status becomes the adapter's
 * (redacted) error, the answer is read up to the response size limit, and text is a 502.
 * Not an async function (docs/decisions/0032-plugin-hot-path-shapes.md).
 */
export function sendForJson(
  adapter: HttpProviderAdapter,
  a: Attempt,
  req: UpstreamRequest,
  transport: Transport,
  opts: CallOptions,
): Promise<{ body: unknown; headers: UpstreamResponse['headers']; bytes: Buffer }> {
  const max = opts.limits.maxResponseBytes;
  return transport
    .sendWhole(req, a.provider, {
      signal: opts.abort,
      headersTimeoutMs: opts.headersTimeoutMs,
      bodyTimeoutMs: opts.idleTimeoutMs,
      limit: (status) => answerLimit(status, max),
    })
    .then(
      (res) => {
        const body = jsonOrText(res.body);
        if (res.status >= 400) throw upstreamFailure(adapter, a, res.status, res.headers, body, opts);
        if (typeof body === 'string') throw errors.upstreamProtocol(a.provider.name, 'the answer was not JSON');
        return { body, headers: res.headers, bytes: res.body };
      },
      (e: unknown) => {
        // Refused or failed before the answer's head: already the transport's error; after: a failed read.
        throw mapReadError(e, a.provider.name, opts.abort);
      },
    );
}

/**
 * One streaming upstream call, as OpenAI chunks: an error before the stream's head (or an error status) rejects;
 * later ones come from the chunks' next(), after the chunks before them.
 */
export async function callStream(
  a: Attempt,
  transport: Transport,
  ctx: AdapterContext,
  opts: CallOptions,
): Promise<ChunkSource> {
  const adapter = getAdapter(a.provider.type);
  if (adapter.kind === 'local')
    return adapter.stream(a.request, target(a, opts), ctx, opts.abort.signal)[Symbol.asyncIterator]();
  const req = adapter.buildRequest(a.request, target(a, opts), true);
  const res = await transport.send(req, a.provider, {
    signal: opts.abort,
    headersTimeoutMs: opts.headersTimeoutMs,
    bodyTimeoutMs: opts.idleTimeoutMs,
  });
  if (res.status >= 400) throw await streamFailure(adapter, a, res, opts);
  const p = a.provider;
  return new UpstreamChunks(
    res.body,
    parserFor(adapter, opts),
    adapter.createStreamTranslator(ctx),
    // A provider's mid-stream error event may quote the key too.
    (e) => sanitizeError(mapReadError(e, p.name, opts.abort), providerSecrets(p)),
    () => errors.streamInterrupted(p.name, 'the upstream closed the stream without finishing it'),
  );
}

function parserFor(adapter: HttpProviderAdapter, opts: CallOptions): EventParser {
  const max = opts.limits.maxEventBytes;
  return adapter.streamFormat === 'ndjson'
    ? new NdjsonParser(max)
    : adapter.streamFormat === 'aws-eventstream'
      ? new AwsEventStreamParser(max)
      : new SseParser(max);
}

/** The adapter's way of speaking the request's inbound wire, if it speaks it (a same-wire attempt). */
export function sameWireOf(a: Attempt, inbound: SameWireRequest): SameWire | undefined {
  const adapter = getAdapter(a.provider.type);
  return adapter.kind === 'http' ? adapter.sameWire?.[inbound.wire] : undefined;
}

/**
 * One plain same-wire call: the client's own request, the upstream's answer kept as its bytes (for the client) and
 * parsed as any answer of this adapter (the chat view the chain reads: usage, records).
 */
export function callPlainSameWire(
  a: Attempt,
  wire: SameWire,
  inbound: SameWireRequest,
  transport: Transport,
  ctx: AdapterContext,
  opts: CallOptions,
): Promise<{ body: ChatCompletion; native: Buffer }> {
  const adapter = getAdapter(a.provider.type) as HttpProviderAdapter;
  const req = wire.buildRequest(inbound, target(a, opts), false);
  return sendForJson(adapter, a, req, transport, opts).then(({ body, bytes }) => ({
    body: adapter.parseResponse(body, ctx),
    native: bytes,
  }));
}

/**
 * One streamed same-wire call: the client's own request; the stream translated as any of this adapter's, each chunk
 * carrying the bytes of its upstream events (SameWireChunks).
 */
export async function callStreamSameWire(
  a: Attempt,
  wire: SameWire,
  inbound: SameWireRequest,
  transport: Transport,
  ctx: AdapterContext,
  opts: CallOptions,
): Promise<ChunkSource> {
  const adapter = getAdapter(a.provider.type) as HttpProviderAdapter;
  const req = wire.buildRequest(inbound, target(a, opts), true);
  const res = await transport.send(req, a.provider, {
    signal: opts.abort,
    headersTimeoutMs: opts.headersTimeoutMs,
    bodyTimeoutMs: opts.idleTimeoutMs,
  });
  if (res.status >= 400) throw await streamFailure(adapter, a, res, opts);
  const p = a.provider;
  const secrets = providerSecrets(p);
  return new SameWireChunks(
    res.body,
    parserFor(adapter, opts),
    adapter.createStreamTranslator(ctx),
    (e) => sanitizeError(mapReadError(e, p.name, opts.abort), secrets),
    () => errors.streamInterrupted(p.name, 'the upstream closed the stream without finishing it'),
    wire.frameEvent,
    (text) => redactSecrets(text, secrets),
  );
}

/**
 * A token count by the provider's own endpoint (free there): the count's answer as its bytes, and an empty answer with
 * no usage as the chat view (credit settles nothing; limits count the request, no tokens). Undefined when the adapter
 * has no counting endpoint.
 */
export function callCountSameWire(
  a: Attempt,
  wire: SameWire,
  inbound: SameWireRequest,
  transport: Transport,
  ctx: AdapterContext,
  opts: CallOptions,
): Promise<{ body: ChatCompletion; native: Buffer }> | undefined {
  const count = wire.countTokens;
  if (!count) return undefined;
  const adapter = getAdapter(a.provider.type) as HttpProviderAdapter;
  return sendForJson(adapter, a, count.buildRequest(inbound, target(a, opts)), transport, opts).then(
    ({ body, bytes }) => {
      if (count.parse(body) === undefined)
        throw errors.upstreamProtocol(a.provider.name, 'the token count answer has no count');
      return { body: emptyAnswer(ctx), native: bytes };
    },
  );
}

/** An answer with nothing in it and no usage: what a token count is to the chain. */
export function emptyAnswer(ctx: AdapterContext): ChatCompletion {
  return {
    id: ctx.id,
    object: 'chat.completion',
    created: ctx.created,
    model: ctx.model,
    choices: [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
  };
}

export function mapReadError(e: unknown, provider: string, signal: AbortLike): GatewayError {
  if (isGatewayError(e)) return e;
  if (signal.aborted && isGatewayError(signal.reason)) return signal.reason;
  if (e instanceof SizeLimitError) return errors.upstreamTooLarge(provider, e.what, e.limit);
  const name = (e as { name?: string; code?: string }).code ?? (e as Error).name;
  if (name === 'UND_ERR_BODY_TIMEOUT' || name === 'BodyTimeoutError') return errors.upstreamTimeout(provider);
  return errors.streamInterrupted(provider, name ?? 'read failed');
}
