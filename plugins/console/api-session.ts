/**
 * @module
 * The console's sign-in: POST /console/api/session (a key for a session cookie; through the failed sign-in throttle),
 * DELETE (sign out: the session ends on every replica), GET /console/api/me (who is signed in, the role, and the CSRF
 * token writes need); the open sessions, listed and revoked by the admin role: GET/DELETE /console/api/sessions[/{id}]
 * in the console and GET/DELETE /v1/sessions[/{id}] in the admin API.
 */
import type Router from '@koa/router';
import type Koa from 'koa';
import {
  ADMIN_GUARD,
  AUTH_THROTTLE,
  AUTHENTICATE_KEY,
  auditActor,
  bodyReader,
  errors,
  fromNano,
  pluginCode,
  requireRole,
  roleOf,
  type Principal,
  type SharedServices,
  type Store,
} from '../../src/plugin';
import { bodies } from './generated/bodies';
import { principalOf, sessionJson, type ConsoleSession, type Sessions } from './session';
import { secure } from './secure';

const readSignIn = bodyReader<{ key: string }>(bodies.signIn);

export interface SessionRouteDeps {
  store: Store;
  shared: SharedServices;
  sessions: Sessions;
  need: (ctx: Parameters<Router.Middleware>[0]) => Promise<ConsoleSession>;
  /** Whether single sign-on is configured (GET /console/api/me tells the sign-in page without a session). */
  sso: { enabled: boolean };
  /** What the console calls a credit (console.credit_unit). */
  creditUnit: string;
}

/** A key typed into the sign-in form, checked through the failed-auth throttle (limits') when there is one. */
async function checkKey(ctx: Koa.Context, shared: SharedServices, key: string): Promise<Principal> {
  const check = shared.get(AUTHENTICATE_KEY);
  if (!check) throw errors.forbidden('auth_not_configured', 'The console needs the auth plugin to sign in');
  const throttle = shared.get(AUTH_THROTTLE);
  throttle?.check(ctx.ip);
  try {
    return await check(key);
  } catch (e) {
    if ((e as { status?: number }).status === 401) throttle?.failed(ctx.ip);
    throw e;
  }
}

export function registerSessionRoutes(router: Router, deps: SessionRouteDeps): void {
  const { store, shared, sessions, need } = deps;
  router.post('/console/api/session', async (ctx) => {
    secure(ctx);
    const origin = ctx.get('origin');
    if (origin && origin !== `${ctx.protocol}://${ctx.host}`)
      throw errors.forbidden('cross_origin_refused', 'Sign in from the console itself');
    const p = await checkKey(ctx, shared, (await readSignIn(ctx)).key.trim());
    const s = await sessions.open(ctx, {
      role: roleOf(p),
      subject: p.keyHash,
      openedWith: p.isAdmin ? 'admin_key' : 'key',
      accountId: p.isAdmin ? '*' : p.accountId,
      label: p.keyLabel,
    });
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      data: {
        is_admin: s.role === 'admin',
        role: s.role,
        account_id: s.accountId === '*' ? null : s.accountId,
        key_label: s.keyLabel,
        csrf_token: s.csrf,
      },
    };
  });
  router.delete('/console/api/session', async (ctx) => {
    const s = await need(ctx);
    await sessions.end(ctx, s, 'signed_out', s);
    sessions.clear(ctx);
    ctx.body = { data: { signed_out: true } };
  });
  router.get('/console/api/me', async (ctx) => {
    // The sign-in page asks too: it learns whether to offer single sign-on (with the 401, or for after sign-out).
    ctx.set('X-Console-SSO', deps.sso.enabled ? 'on' : 'off');
    const s = await need(ctx);
    const account = s.accountId === '*' ? undefined : await store.accounts.get(s.accountId);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      data: {
        is_admin: s.role === 'admin',
        role: s.role,
        session_id: s.id,
        opened_with: s.openedWith,
        key_label: s.keyLabel,
        csrf_token: s.csrf,
        credit_unit: deps.creditUnit,
        account: account
          ? { id: account.id, name: account.name, credits: fromNano(account.credits), usage: fromNano(account.usage) }
          : null,
      },
    };
  });
  registerSessionAdmin(router, sessions, shared, need);
}

/** The open sessions, for the admin role: in the console (session cookie) and in the admin API (Bearer key). */
function registerSessionAdmin(
  router: Router,
  sessions: Sessions,
  shared: SharedServices,
  need: SessionRouteDeps['need'],
): void {
  const list = async (ctx: Koa.Context, current?: string) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { data: (await sessions.list(ctx)).map((s) => ({ ...sessionJson(s), current: s.id === current })) };
  };
  const revoke = async (ctx: Koa.Context, by: Parameters<Sessions['end']>[3]) => {
    const target = await sessions.get(String(ctx.params.id).slice(0, 64));
    if (!target || !(await sessions.end(ctx, target, 'revoked', by)))
      throw errors.notFound(pluginCode('session_not_found'), 'No open session with that id');
    ctx.body = { data: { id: target.id, revoked: true } };
  };
  router.get('/console/api/sessions', async (ctx) => {
    const s = await need(ctx);
    requireRole(principalOf(s), 'admin');
    await list(ctx, s.id);
  });
  router.delete('/console/api/sessions/:id', async (ctx) => {
    const s = await need(ctx);
    requireRole(principalOf(s), 'admin');
    await revoke(ctx, s);
  });
  const admin = async (ctx: Koa.Context): Promise<Principal> => {
    const guard = shared.get(ADMIN_GUARD);
    if (!guard) throw errors.forbidden('auth_not_configured', 'The admin API needs the auth plugin');
    return guard(ctx, 'admin');
  };
  router.get('/v1/sessions', async (ctx) => {
    await admin(ctx);
    await list(ctx);
  });
  router.delete('/v1/sessions/:id', async (ctx) => {
    const p = await admin(ctx);
    await revoke(ctx, { principal: p, actor: auditActor(p), source: 'admin_api' });
  });
}
