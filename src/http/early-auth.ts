import type Koa from 'koa';
import type { Authenticate } from '../auth/contract';
import { callAsync } from '../call-async';

/**
 * Authenticate from the headers before a byte of the body is read, so an unauthenticated
 * client cannot hold a socket by sending its body slowly. On failure, when the body has not
 * fully arrived yet, the connection is closed after the answer rather than waiting for it.
 */
export function authenticateFirst(ctx: Koa.Context, authenticate: Authenticate): Promise<unknown> {
  // A plugin's authenticate that throws instead of rejecting fails the same way.
  return callAsync(() => authenticate(ctx)).catch((e: unknown) => {
    // A body still on its way is not waited for: the connection closes after the answer.
    if (!ctx.req.complete) ctx.set('Connection', 'close');
    throw e;
  });
}
