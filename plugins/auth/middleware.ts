/**
 * @module
 * The auth plugin's step on the chat chain: the caller's principal, or a 401 (403 for the admin key).
 */
import type Koa from 'koa';
import { errors, type GatewayContext, type Next } from '../../src/plugin';
import type { Authenticator } from './authenticator';

/** The middleware that puts the request's caller in `ctx.state.gateway.principal`. */
export function authMiddleware(authenticator: Authenticator) {
  // Not an async function (docs/decisions/0032-plugin-hot-path-shapes.md).
  return function auth(ctx: GatewayContext, next: Next): Promise<void> {
    return authenticator.authenticate(ctx as unknown as Koa.Context).then((principal) => {
      if (principal.isAdmin)
        throw errors.forbidden(
          'admin_key_not_allowed',
          "The admin key cannot call chat completions; use an account's key",
        );
      ctx.state.gateway.principal = principal;
      return next();
    });
  };
}
