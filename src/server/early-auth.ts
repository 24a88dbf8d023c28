import type Koa from 'koa';
import type { Authenticate } from '../auth/contract';

/**
 * Authenticate from the headers before a byte of the body is read, so an unauthenticated
 * client cannot hold a socket by sending its body slowly. On failure the connection is
 * closed after the answer (its unread body is not waited for).
 */
export async function authenticateFirst(ctx: Koa.Context, authenticate: Authenticate): Promise<void> {
  try {
    await authenticate(ctx);
  } catch (e) {
    ctx.set('Connection', 'close');
    throw e;
  }
}
