/**
 * @module
 * The oauth plugin's step on the chat chain: none of its own (its work is its endpoints, routes.ts); the request
 * passes on as it came.
 */
import type { GatewayContext, Next } from '../../src/plugin';

export function oauthMiddleware() {
  // Not an async function: it only passes next's promise on (docs/decisions/0032-plugin-hot-path-shapes.md).
  return function oauth(_ctx: GatewayContext, next: Next): Promise<void> {
    return next();
  };
}
