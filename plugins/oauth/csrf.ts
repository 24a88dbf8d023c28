import { randomBytes } from 'node:crypto';
import type Koa from 'koa';
import { constantTimeEqual, errors } from '../../src/plugin';

const COOKIE = 'gw_consent_csrf';

/**
 * A fresh anti-CSRF token for the consent form, also set as a cookie (HttpOnly, SameSite=Strict,
 * path /auth): a double submit that needs no server state, so any replica can check it.
 */
export function issueCsrf(ctx: Koa.Context): string {
  const token = randomBytes(24).toString('base64url');
  ctx.cookies.set(COOKIE, token, {
    path: '/auth',
    httpOnly: true,
    sameSite: 'strict',
    maxAge: 3_600_000,
    overwrite: true,
    secure: ctx.secure,
  });
  return token;
}

/** The posted token must equal the cookie's: another site can make a browser post, not read or set this cookie. */
export function checkCsrf(ctx: Koa.Context, posted: string | null): void {
  const cookie = ctx.cookies.get(COOKIE);
  if (!cookie || !posted || !constantTimeEqual(cookie, posted)) {
    throw errors.forbidden(
      'csrf_failed',
      'The consent form expired or was not sent from this gateway; open the authorization link again',
    );
  }
}

/**
 * The consent post must come from a page of this gateway: its Origin (or, lacking one, its
 * Referer) names this host. The scheme is not compared: TLS may end at a proxy in front.
 */
export function checkSameOrigin(ctx: Koa.Context): void {
  const from = ctx.get('origin') || ctx.get('referer');
  let host: string | undefined;
  try {
    host = from && from !== 'null' ? new URL(from).host : undefined;
  } catch {
    host = undefined;
  }
  if (host === undefined || host !== ctx.host)
    throw errors.forbidden('cross_origin', "The consent form may only be posted from this gateway's own page");
}
