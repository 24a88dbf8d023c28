/**
 * @module
 * Single sign-on to the console with OpenID Connect: the console is a relying party of one issuer (`sso:` in the
 * console's config). GET /console/sso/login starts an authorization code flow with PKCE (S256), a `state` and a
 * `nonce`, kept in the store (`console_sso_logins`, so the callback may reach any replica) and bound to this browser by
 * a cookie; GET /console/sso/callback takes each state once, exchanges the code, and has the ID token checked
 * (signature against the issuer's JWKS, `iss`, `aud`, `exp`, `nonce`) by openid-client, then maps the role claim to
 * a console role and opens a session (session.ts). GET /console/api/sso shows the settings (never the secret) to the
 * admin role. The protocol is openid-client's (panva's, OpenID certified); nothing of it is done by hand here.
 */
import type Router from '@koa/router';
import type Koa from 'koa';
import { randomBytes } from 'node:crypto';
import type * as OpenId from 'openid-client';
import {
  errors,
  hashKey,
  pluginCode,
  requireRole,
  ROLES,
  type PluginServices,
  type Role,
  type Store,
} from '../../src/plugin';

type Logger = PluginServices['logger'];
import type { SsoConfig } from './schema';
import { secure } from './secure';
import { principalOf, type ConsoleSession, type Sessions } from './session';

const BROWSER_COOKIE = 'gw_sso';
const PENDING_MS = 10 * 60_000;
const LOOPBACK = /^(127\.\d+\.\d+\.\d+|\[::1\]|localhost)$/;

type Claims = Record<string, unknown>;

/** The highest console role the claim's values map to, else the default role, else undefined (refused). */
export function mapRole(cfg: Pick<SsoConfig, 'roles' | 'default_role'>, claim: unknown): Role | undefined {
  const values = Array.isArray(claim) ? claim : claim === undefined || claim === null ? [] : [claim];
  let best: Role | undefined;
  for (const v of values) {
    if (typeof v !== 'string' || !Object.hasOwn(cfg.roles, v)) continue;
    const r = cfg.roles[v];
    if (!best || ROLES.indexOf(r) > ROLES.indexOf(best)) best = r;
  }
  return best ?? cfg.default_role;
}

/** A plain page for a refused or failed sign-on: what happened, and the way back to the sign-in page. */
function refusePage(ctx: Koa.Context, status: number, title: string, detail: string): void {
  const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  secure(ctx);
  ctx.status = status;
  ctx.type = 'html';
  ctx.set('Cache-Control', 'no-store');
  ctx.body =
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(title)} · Gateway console</title>` +
    '<link rel="stylesheet" href="/console/app.css"></head><body>' +
    '<div class="center"><div class="card signin" id="sso-refused">' +
    `<h1>${esc(title)}</h1><p>${esc(detail)}</p>` +
    '<p><a href="/console">Back to the sign-in page</a></p></div></div></body></html>';
}

export interface SsoDeps {
  store: Store;
  sessions: Sessions;
  logger: Logger;
  need: (ctx: Koa.Context) => Promise<ConsoleSession>;
}

type Client = { lib: typeof OpenId; config: OpenId.Configuration };

/** The provider's configuration, discovered at the first sign-on (an issuer down at start does not stop the gateway).
 */
function ssoClient(cfg: SsoConfig): () => Promise<Client> {
  let discovered: Promise<Client> | undefined;
  return () =>
    (discovered ??= (async () => {
      const lib = await import('openid-client');
      const issuer = new URL(cfg.issuer);
      // Plain http only for an issuer on loopback (a local or test provider): anywhere else it must be https.
      const insecure = issuer.protocol === 'http:' && LOOPBACK.test(issuer.hostname);
      const config = await lib.discovery(
        issuer,
        cfg.client_id,
        cfg.client_secret,
        cfg.client_secret ? undefined : lib.None(),
        insecure ? { execute: [lib.allowInsecureRequests], timeout: 10 } : { timeout: 10 },
      );
      // Check the ID token's signature against the issuer's keys (jwks_uri), not only its claims.
      lib.enableNonRepudiationChecks(config);
      return { lib, config };
    })().catch((e: unknown) => {
      discovered = undefined; // discovered again at the next sign-on
      throw e;
    }));
}

const redirectUriOf = (cfg: SsoConfig, ctx: Koa.Context) =>
  cfg.redirect_uri ?? `${ctx.protocol}://${ctx.host}/console/sso/callback`;

/** The console's OpenID Connect relying party (see the module header). */
export function registerSso(router: Router, cfg: SsoConfig, deps: SsoDeps): void {
  const client = ssoClient(cfg);
  router.get('/console/sso/login', (ctx) => startSignOn(ctx, cfg, client, deps));
  router.get('/console/sso/callback', (ctx) => finishSignOn(ctx, cfg, client, deps));
  // The settings, for the admin role only (an operator gets 403 role_required): never the client secret.
  router.get('/console/api/sso', async (ctx) => {
    requireRole(principalOf(await deps.need(ctx)), 'admin');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      data: {
        issuer: cfg.issuer,
        client_id: cfg.client_id,
        client_secret: cfg.client_secret ? 'set' : 'none',
        redirect_uri: cfg.redirect_uri ?? null,
        scopes: cfg.scopes,
        role_claim: cfg.role_claim,
        roles: cfg.roles,
        default_role: cfg.default_role ?? null,
      },
    };
  });
}

/** GET /console/sso/login: a pending sign-in (state, nonce, PKCE verifier, this browser), then the provider. */
async function startSignOn(ctx: Koa.Context, cfg: SsoConfig, client: () => Promise<Client>, deps: SsoDeps) {
  let c: Client;
  try {
    c = await client();
  } catch (e) {
    deps.logger.warn({ err: e instanceof Error ? e.message : String(e), issuer: cfg.issuer }, 'sso discovery failed');
    return refusePage(ctx, 502, 'Single sign-on is unavailable', `The identity provider could not be reached.`);
  }
  const { lib, config } = c;
  const verifier = lib.randomPKCECodeVerifier();
  const state = lib.randomState();
  const nonce = lib.randomNonce();
  const browser = randomBytes(24).toString('base64url');
  const now = Date.now();
  await deps.store.db.run('DELETE FROM console_sso_logins WHERE expires_at < ?', [now]);
  await deps.store.db.run(
    'INSERT INTO console_sso_logins (state_hash, browser_hash, verifier, nonce, expires_at) VALUES (?, ?, ?, ?, ?)',
    [hashKey(state), hashKey(browser), verifier, nonce, now + PENDING_MS],
  );
  // Lax: the provider's redirect back is a cross-site top-level GET, which a Strict cookie would not reach.
  ctx.cookies.set(BROWSER_COOKIE, browser, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/console/sso',
    maxAge: PENDING_MS,
    secure: ctx.secure,
    overwrite: true,
  });
  const url = lib.buildAuthorizationUrl(config, {
    redirect_uri: redirectUriOf(cfg, ctx),
    scope: cfg.scopes.join(' '),
    code_challenge: await lib.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  secure(ctx);
  ctx.set('Cache-Control', 'no-store');
  ctx.redirect(url.href);
}

/** The pending sign-in a callback's state names, taken once, by the browser that started it, before it expires. */
async function takePending(
  ctx: Koa.Context,
  store: Store,
  state: string,
): Promise<Record<string, unknown> | undefined> {
  const browser = ctx.cookies.get(BROWSER_COOKIE) ?? '';
  const row = state
    ? await store.db.get<Record<string, unknown>>('SELECT * FROM console_sso_logins WHERE state_hash = ?', [
        hashKey(state),
      ])
    : undefined;
  const taken = row
    ? (await store.db.run('DELETE FROM console_sso_logins WHERE state_hash = ?', [hashKey(state)])).changes === 1
    : false;
  if (!row || !taken || Number(row.expires_at) <= Date.now() || hashKey(browser) !== row.browser_hash) return undefined;
  return row;
}

/** The ID token's claims (its signature, issuer, audience, expiry and nonce checked), with userinfo's for the role. */
async function exchange(
  ctx: Koa.Context,
  cfg: SsoConfig,
  { lib, config }: Client,
  row: Record<string, unknown>,
  state: string,
): Promise<Claims> {
  const current = new URL(redirectUriOf(cfg, ctx));
  current.search = ctx.querystring;
  const tokens = await lib.authorizationCodeGrant(config, current, {
    pkceCodeVerifier: row.verifier as string,
    expectedState: state,
    expectedNonce: row.nonce as string,
    idTokenExpected: true,
  });
  const claims: Claims = { ...(tokens.claims() ?? {}) };
  // Providers that keep groups out of the ID token give them in userinfo (same subject, checked).
  if (claims[cfg.role_claim] === undefined && tokens.access_token)
    return { ...(await lib.fetchUserInfo(config, tokens.access_token, claims.sub as string)), ...claims };
  return claims;
}

/** openid-client's message, and the provider's own error code and description when it answered with one. */
function refusalReason(e: unknown): string {
  const body = e as { error?: unknown; error_description?: unknown };
  const said = [body.error, body.error_description].filter((v) => typeof v === 'string').join(': ');
  return `${e instanceof Error ? e.message : String(e)}${said ? ` (${said.slice(0, 200)})` : ''}`;
}

/** GET /console/sso/callback: the code exchanged, the role mapped from the claim, a session opened with it. */
async function finishSignOn(ctx: Koa.Context, cfg: SsoConfig, client: () => Promise<Client>, deps: SsoDeps) {
  const state = typeof ctx.query.state === 'string' ? ctx.query.state : '';
  const row = await takePending(ctx, deps.store, state);
  if (!row)
    return refusePage(
      ctx,
      400,
      'Sign-in refused',
      'This sign-in is unknown, was already used, has expired, or was started in another browser. Start again.',
    );
  ctx.cookies.set(BROWSER_COOKIE, '', { path: '/console/sso', maxAge: 0, httpOnly: true, overwrite: true });
  if (typeof ctx.query.error === 'string')
    return refusePage(ctx, 403, 'Sign-in refused', `The identity provider said: ${ctx.query.error.slice(0, 200)}`);
  let claims: Claims;
  try {
    claims = await exchange(ctx, cfg, await client(), row, state);
  } catch (e) {
    const why = refusalReason(e);
    deps.logger.warn({ err: why, issuer: cfg.issuer }, 'sso sign-in refused');
    return refusePage(ctx, 401, 'Sign-in refused', `The identity provider's answer was not accepted: ${why}`);
  }
  const role = mapRole(cfg, claims[cfg.role_claim]);
  const sub = String(claims.sub);
  if (!role)
    return refusePage(
      ctx,
      403,
      'No console role',
      `You signed in as ${sub}, but your '${cfg.role_claim}' claim maps to no console role and no default role is ` +
        'set. Ask an administrator to add your group to the console’s sso.roles.',
    );
  const label = [claims.email, claims.preferred_username, claims.name, sub].find((v) => typeof v === 'string');
  await deps.sessions.open(ctx, { role, subject: sub, openedWith: 'sso', accountId: '*', label: String(label) });
  secure(ctx);
  ctx.set('Cache-Control', 'no-store');
  ctx.redirect('/console#/overview');
}

/** The refusal for a route that SSO does not serve when it is off. */
export function ssoOff(router: Router): void {
  router.get('/console/api/sso', () => {
    throw errors.notFound(pluginCode('sso_not_configured'), 'Single sign-on is not configured (console.sso)');
  });
}
