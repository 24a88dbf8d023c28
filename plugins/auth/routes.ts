/**
 * @module
 * The auth plugin's HTTP API: the admin API (OpenRouter's key-provisioning shape) and the two endpoints an ordinary
 * key may call about itself. The admin API answers by role (src/auth/roles.ts): the admin key (`admin`) and keys
 * made with a role (`operator`, `viewer`); an ordinary key (`account`) gets 403 `role_required`. Every change is
 * appended to the audit log (recordAudit).
 */
import type Router from '@koa/router';
import type Koa from 'koa';
import {
  accountJson,
  addCreditsChecked,
  errors,
  fromNano,
  issueKey,
  keyJson,
  keyRoleOf,
  money,
  paging,
  readAccount,
  readAmount,
  readKeyPatch,
  readNewKey,
  recordAudit,
  requireRole,
  type AdminGuard,
  type ApiKey,
  type Principal,
  type Role,
  type Store,
} from '../../src/plugin';
import type { Authenticator } from './authenticator';

function parseDate(s: string | null | undefined): number | null {
  if (s === undefined || s === null) return null;
  const t = Date.parse(s);
  if (Number.isNaN(t))
    throw errors.invalidRequest('expires_at must be an ISO 8601 date-time', 'expires_at', 'invalid_field');
  return t;
}

/**
 * The admin API's check: the caller's principal when its role is at least `least` (`admin` when not given: the admin
 * key alone), else a 403 `role_required` naming the role; a missing or wrong key is a 401 counted by the failed-auth
 * throttle (auth.authenticate goes through it). Offered to other plugins as admin.guard.
 */
export function adminGuard(auth: Authenticator): AdminGuard {
  return async (ctx: Koa.Context, least: Role = 'admin'): Promise<Principal> => {
    const p = await auth.authenticate(ctx);
    requireRole(p, least);
    return p;
  };
}

/** Every route of the auth plugin: accounts and keys (admin API, by role), then a key's own view. */
export function registerAdminRoutes(router: Router, store: Store, auth: Authenticator, admin: AdminGuard): void {
  registerAccountRoutes(router, store, admin);
  registerKeyRoutes(router, store, auth, admin);
  registerOwnRoutes(router, store, auth);
}

async function accountOr404(store: Store, id: string) {
  const a = await store.accounts.get(id);
  if (!a) throw errors.notFound('account_not_found', `No account '${id.slice(0, 64)}'`);
  return a;
}

async function keyOr404(store: Store, hash: string) {
  const k = /^[0-9a-f]{64}$/.test(hash) ? await store.keys.get(hash) : undefined;
  if (!k) throw errors.notFound('key_not_found', 'No key with that hash');
  return k;
}

/**
 * POST/GET /v1/accounts, GET /v1/accounts/:id, POST /v1/accounts/:id/credits: reads need `viewer`, changes
 * `operator`; every change is audited.
 */
function registerAccountRoutes(router: Router, store: Store, admin: AdminGuard): void {
  router.post('/v1/accounts', async (ctx) => {
    const p = await admin(ctx, 'operator');
    const b = await readAccount(ctx);
    const a = await store.accounts.create({
      name: b.name,
      email: b.email ?? null,
      credits: money(b.credits ?? 0, 'credits'),
      customPricing: b.custom_pricing ?? false,
    });
    const after = accountJson(a);
    await recordAudit(store, ctx, p, { action: 'account.create', target: a.id, after });
    ctx.status = 201;
    ctx.body = { data: after };
  });
  router.get('/v1/accounts', async (ctx) => {
    await admin(ctx, 'viewer');
    const { limit, offset } = paging(ctx);
    ctx.body = { data: (await store.accounts.list(limit, offset)).map(accountJson) };
  });
  router.get('/v1/accounts/:id', async (ctx) => {
    await admin(ctx, 'viewer');
    ctx.body = { data: accountJson(await accountOr404(store, ctx.params.id)) };
  });
  router.post('/v1/accounts/:id/credits', async (ctx) => {
    const p = await admin(ctx, 'operator');
    const { amount } = await readAmount(ctx);
    const before = await accountOr404(store, ctx.params.id);
    const a = await addCreditsChecked(store, ctx.params.id, amount);
    if (!a) throw errors.notFound('account_not_found', `No account '${ctx.params.id.slice(0, 64)}'`);
    const after = accountJson(a);
    await recordAudit(store, ctx, p, {
      action: 'credits.add',
      target: a.id,
      before: { credits: fromNano(before.credits) },
      after: { amount, credits: after.credits },
    });
    ctx.body = { data: after };
  });
}

/**
 * POST/GET /v1/keys, GET/PATCH/DELETE /v1/keys/:hash: reads need `viewer`, changes `operator`, a key's role `admin` to
 * change and at least that role to give at creation (an operator may mint an operator or viewer key, never more);
 * every change is audited (never the raw key); a changed key is forgotten by this replica's cache.
 */
function registerKeyRoutes(router: Router, store: Store, auth: Authenticator, admin: AdminGuard): void {
  router.post('/v1/keys', async (ctx) => {
    const p = await admin(ctx, 'operator');
    const b = await readNewKey(ctx);
    const role = keyRoleOf(p, b.role) ?? null;
    await accountOr404(store, b.account_id);
    const { raw, key } = await issueKey(store.keys, {
      accountId: b.account_id,
      name: b.name,
      limit: b.limit === undefined || b.limit === null ? null : money(b.limit, 'limit'),
      limitReset: b.limit_reset ?? null,
      expiresAt: parseDate(b.expires_at),
      role,
    });
    const after = keyJson(key);
    await recordAudit(store, ctx, p, { action: 'key.create', target: key.hash, after });
    ctx.status = 201;
    ctx.body = { key: raw, data: after };
  });
  router.get('/v1/keys', async (ctx) => {
    await admin(ctx, 'viewer');
    const { limit, offset } = paging(ctx);
    const accountId = typeof ctx.query.account_id === 'string' ? ctx.query.account_id : undefined;
    ctx.body = { data: (await store.keys.list({ accountId, limit, offset })).map(keyJson) };
  });
  router.get('/v1/keys/:hash', async (ctx) => {
    await admin(ctx, 'viewer');
    ctx.body = { data: keyJson(await keyOr404(store, ctx.params.hash)) };
  });
  router.patch('/v1/keys/:hash', async (ctx) => {
    const p = await admin(ctx, 'operator');
    const before = await keyOr404(store, ctx.params.hash);
    const b = await readKeyPatch(ctx);
    const role = keyRoleOf(p, b.role);
    if (role !== undefined && role !== before.role) requireRole(p, 'admin');
    const k = (await store.keys.update(ctx.params.hash, {
      name: b.name,
      disabled: b.disabled,
      limit: b.limit === undefined ? undefined : b.limit === null ? null : money(b.limit, 'limit'),
      limitReset: b.limit_reset,
      role,
    })) as ApiKey;
    auth.forget(ctx.params.hash);
    const after = keyJson(k);
    const action = b.disabled === true && !before.disabled ? 'key.disable' : 'key.update';
    await recordAudit(store, ctx, p, { action, target: k.hash, before: keyJson(before), after });
    ctx.body = { data: after };
  });
  router.delete('/v1/keys/:hash', async (ctx) => {
    const p = await admin(ctx, 'operator');
    const before = await keyOr404(store, ctx.params.hash);
    await store.keys.delete(ctx.params.hash);
    auth.forget(ctx.params.hash);
    await recordAudit(store, ctx, p, { action: 'key.delete', target: before.hash, before: keyJson(before) });
    ctx.body = { data: { hash: ctx.params.hash, deleted: true } };
  });
}

/** GET /v1/key and GET /v1/credits: what any key (the latter: an account's key) may ask about itself. */
function registerOwnRoutes(router: Router, store: Store, auth: Authenticator): void {
  router.get('/v1/key', async (ctx) => {
    const p = await auth.authenticate(ctx);
    if (p.isAdmin) {
      ctx.body = {
        data: {
          label: 'admin',
          name: 'admin',
          usage: 0,
          limit: null,
          limit_remaining: null,
          is_admin: true,
          role: 'admin',
        },
      };
      return;
    }
    const j = keyJson(await keyOr404(store, p.keyHash));
    ctx.body = {
      data: {
        label: j.label,
        name: j.name,
        usage: j.usage,
        limit: j.limit,
        limit_remaining: j.limit_remaining,
        limit_reset: j.limit_reset,
        is_admin: false,
        role: j.role,
      },
    };
  });
  router.get('/v1/credits', async (ctx) => {
    const p = await auth.authenticate(ctx);
    if (p.isAdmin) throw errors.forbidden('account_key_required', "The admin key has no account; use an account's key");
    const a = await accountOr404(store, p.accountId);
    ctx.body = { data: { total_credits: fromNano(a.credits), total_usage: fromNano(a.usage) } };
  });
}
