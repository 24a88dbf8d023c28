/**
 * @module
 * The headers on every console answer.
 */
import type Koa from 'koa';

/** The console's Content-Security-Policy: everything from its own origin, nothing framed, forms post only to it. */
const CSP = [
  "default-src 'self'",
  "img-src 'self' data:",
  "style-src 'self'",
  "script-src 'self'",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

/** Headers on every console answer: no framing, no third-party anything, no caching of data. */
export function secure(ctx: Koa.Context): void {
  ctx.set('Content-Security-Policy', CSP);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Frame-Options', 'DENY');
}
