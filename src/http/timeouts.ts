import type { Server } from 'node:http';
import type { ServerConfig } from '../config/types';

/**
 * Slow clients cannot hold sockets: the headers must arrive within `headers_timeout_ms`, the
 * whole request (headers and body) within `body_timeout_ms` (Node answers 408 and closes), and
 * an idle keep-alive connection closes after `keep_alive_timeout_ms`. `requestTimeout` ends
 * when the request has been received, so a long answer (a stream) is not limited by it.
 */
export function applyServerTimeouts(server: Server, cfg: ServerConfig): void {
  server.headersTimeout = cfg.headers_timeout_ms;
  server.requestTimeout = Math.max(cfg.body_timeout_ms, cfg.headers_timeout_ms);
  server.keepAliveTimeout = cfg.keep_alive_timeout_ms;
}

/** Node checks those timeouts on an interval (30 s by default): check often enough to keep them. */
export function checkingIntervalMs(cfg: ServerConfig): number {
  return Math.max(50, Math.min(1000, Math.floor(Math.min(cfg.headers_timeout_ms, cfg.body_timeout_ms) / 4)));
}
