import type Koa from 'koa';
import type { Authenticate } from '../auth/contract';

/**
 * Authenticate from the headers before a byte of the body is read, so an unauthenticated
 * client cannot hold a socket by sending its body slowly. On failure, when the body has not
 * fully arrived yet, the connection is closed after the answer rather than waiting for it.
 */
export function authenticateFirst(ctx: Koa.Context, authenticate: Authenticate): Promise<unknown> {
  let checked: Promise<unknown>;
  try {
    checked = authenticate(ctx);
  } catch (e) {
    checked = Promise.reject(e); // a plugin's authenticate that throws instead of rejecting
  }
  return checked.catch((e: unknown) => {
    // A body still on its way is not waited for: the connection closes after the answer.
    if (!ctx.req.complete) ctx.set('Connection', 'close');
    throw e;
  });
}
