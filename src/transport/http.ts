import { Pool, errors as undiciErrors, type Dispatcher } from 'undici';
import { errors, GatewayError } from '../errors';
import type { ProviderConfig } from '../config/types';
import type { UpstreamRequest } from '../providers/types';

export interface SendOptions {
  signal: AbortSignal;
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
    let p = this.pools.get(origin);
    if (!p) {
      p = new Pool(origin, {
        connections: provider.max_connections,
        connect: { timeout: provider.connect_timeout_ms },
        keepAliveTimeout: 30_000,
        pipelining: 1,
      });
      this.pools.set(origin, p);
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

  async send(req: UpstreamRequest, provider: ProviderConfig, opts: SendOptions): Promise<UpstreamResponse> {
    const url = this.parse(req.url);
    const pool = this.pool(url.origin, provider);
    try {
      const res = await pool.request({
        path: url.path,
        method: req.method,
        headers: req.headers,
        body: req.method === 'GET' ? undefined : req.body,
        signal: opts.signal,
        headersTimeout: opts.headersTimeoutMs,
        bodyTimeout: opts.bodyTimeoutMs,
      });
      return { status: res.statusCode, headers: res.headers, body: res.body };
    } catch (e) {
      throw mapTransportError(e, provider.name, opts.signal);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((p) => p.close().catch(() => undefined)));
    this.pools.clear();
  }
}

/** Socket-level failures become retryable GatewayErrors; an abort keeps its reason. */
export function mapTransportError(e: unknown, provider: string, signal?: AbortSignal): GatewayError {
  if (e instanceof GatewayError) return e;
  if (signal?.aborted) {
    const reason: unknown = signal.reason;
    if (reason instanceof GatewayError) return reason;
    return errors.upstreamTimeout(provider);
  }
  if (e instanceof undiciErrors.HeadersTimeoutError || e instanceof undiciErrors.BodyTimeoutError || e instanceof undiciErrors.ConnectTimeoutError) {
    return errors.upstreamTimeout(provider);
  }
  const code = (e as { code?: string }).code;
  return errors.upstreamUnavailable(provider, code ?? (e as Error).message ?? 'unknown error');
}
