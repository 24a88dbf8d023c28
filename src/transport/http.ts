import type { Dispatcher } from 'undici';
import { Pool, undiciErrors } from './undici-pool';
import { WholeAnswer, type UpstreamWhole, type WholeOptions } from './whole-answer';
import { errors, GatewayError, isGatewayError } from '../errors';
import type { ProviderConfig } from '../config/types';
import type { UpstreamRequest } from '../providers/types';
import { validHeaderValue } from '../security/headers';
import type { AbortLike } from '../pipeline/request-abort';

export interface SendOptions {
  /** An AbortSignal, or the gateway's cheaper RequestAbort. */
  signal: AbortLike;
  /** Time to the response headers (covers connect and the upstream's first byte). */
  headersTimeoutMs: number;
  /** Longest silence between body chunks. */
  bodyTimeoutMs: number;
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Dispatcher.ResponseData['body'];
}

/**
 * The one place that talks HTTP to upstreams: an undici Pool per origin (keep-alive,
 * bounded connections), no redirects, aborts and timeouts carried to the socket.
 */
export class Transport {
  private readonly pools = new Map<string, Pool>();

  private pool(origin: string, provider: ProviderConfig): Pool {
    const pin = provider.pinned;
    const key = pin ? `${origin}@${pin.address}` : origin;
    let p = this.pools.get(key);
    if (!p) {
      p = new Pool(origin, {
        connections: provider.max_connections,
        // A pinned pool connects only to the address that was checked: no second DNS answer can redirect it.
        connect: pin
          ? { timeout: provider.connect_timeout_ms, lookup: pinnedLookup(pin) }
          : { timeout: provider.connect_timeout_ms },
        keepAliveTimeout: 30_000,
        pipelining: 1,
      });
      this.pools.set(key, p);
    }
    return p;
  }

  /** Parsed request URLs: adapters build the same few URLs over and over. Bounded. */
  private readonly urls = new Map<string, { origin: string; path: string }>();

  private parse(raw: string): { origin: string; path: string } {
    let u = this.urls.get(raw);
    if (!u) {
      const url = new URL(raw);
      u = { origin: url.origin, path: url.pathname + url.search };
      if (this.urls.size >= 1024) this.urls.clear();
      this.urls.set(raw, u);
    }
    return u;
  }

  /** The pool and dispatch options for `req`, or the error that refuses it before it leaves. */
  private prepare(
    req: UpstreamRequest,
    provider: ProviderConfig,
    opts: SendOptions,
  ): { pool: Pool; options: Dispatcher.RequestOptions } | GatewayError {
    const url = this.parse(req.url);
    // undici refuses such values with an error that would read as the upstream's failure.
    for (const name in req.headers) if (!validHeaderValue(req.headers[name])) return errors.invalidHeaderValue(name);
    return {
      pool: this.pool(url.origin, provider),
      options: {
        path: url.path,
        method: req.method,
        headers: req.headers,
        body: req.method === 'GET' ? undefined : req.body,
        signal: opts.signal,
        headersTimeout: opts.headersTimeoutMs,
        bodyTimeout: opts.bodyTimeoutMs,
      },
    };
  }

  /** Not an async function: the request's own promise, mapped, is one turn of the microtask queue less. */
  send(req: UpstreamRequest, provider: ProviderConfig, opts: SendOptions): Promise<UpstreamResponse> {
    const p = this.prepare(req, provider, opts);
    if (isGatewayError(p)) return Promise.reject(p);
    return p.pool.request(p.options).then(
      (res): UpstreamResponse => ({ status: res.statusCode, headers: res.headers, body: res.body }),
      (e: unknown) => {
        throw mapTransportError(e, provider.name, opts.signal);
      },
    );
  }

  /**
   * Send `req` and read its whole answer (at most `opts.limit(status)` bytes) into memory, without the Readable
   * stream and the async resource request() makes for each answer (./whole-answer.ts). A failure before the answer's
   * head is mapped as send() maps it; one after (a body timeout, a cut connection, a SizeLimitError, an abort) is
   * passed on as it came, for the caller to map as a failed read.
   */
  sendWhole(req: UpstreamRequest, provider: ProviderConfig, opts: WholeOptions): Promise<UpstreamWhole> {
    const p = this.prepare(req, provider, opts);
    if (isGatewayError(p)) return Promise.reject(p);
    return new Promise((resolve, reject) => {
      const answer = new WholeAnswer(opts, resolve, (e, started) =>
        reject(started ? e : mapTransportError(e, provider.name, opts.signal)),
      );
      // dispatch() leaves `signal` alone: the answer's handler follows it.
      p.pool.dispatch(p.options, answer);
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close().catch(() => undefined)));
    this.pools.clear();
  }
}

/** Socket-level failures become retryable GatewayErrors; an abort keeps its reason. */
export function mapTransportError(e: unknown, provider: string, signal?: AbortLike): GatewayError {
  if (isGatewayError(e)) return e;
  if (signal?.aborted) {
    const reason: unknown = signal.reason;
    if (isGatewayError(reason)) return reason;
    // Aborted without a gateway reason: the client went away.
    return errors.clientClosed();
  }
  if (
    e instanceof undiciErrors.HeadersTimeoutError ||
    e instanceof undiciErrors.BodyTimeoutError ||
    e instanceof undiciErrors.ConnectTimeoutError
  ) {
    return errors.upstreamTimeout(provider);
  }
  const code = (e as { code?: string }).code;
  // Reached, then hung up before the status line: not "unreachable".
  if (code === 'UND_ERR_SOCKET') return errors.upstreamClosed(provider);
  return errors.upstreamUnavailable(provider, code ?? (e as Error).message ?? 'unknown error');
}

type LookupCallback = (
  e: Error | null,
  address: string | Array<{ address: string; family: number }>,
  family?: number,
) => void;

/** A dns.lookup stand-in that answers the pinned address, in either calling convention (all: true or not). */
function pinnedLookup(pin: { address: string; family: 4 | 6 }) {
  return (_host: string, opts: { all?: boolean } | LookupCallback, cb?: LookupCallback): void => {
    const callback = (typeof opts === 'function' ? opts : cb) as LookupCallback;
    if (typeof opts === 'object' && opts?.all) callback(null, [{ address: pin.address, family: pin.family }]);
    else callback(null, pin.address, pin.family);
  };
}
