/**
 * @module
 * The auth plugin's HTTP API: the admin API (OpenRouter's key-provisioning shape) and the two endpoints an ordinary
 * key may call about itself. The admin key may call the former and not the chat chain; an ordinary key gets 403 on
 * the former.
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
  money,
  paging,
  readAccount,
  readAmount,
  readKeyPatch,
  readNewKey,
  type AdminGuard,
  type ApiKey,
  type Principal,
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
 * The admin API's check: the admin key's principal; an ordinary key gets 403 (offered to other plugins as
 * admin.guard).
 */
export function adminGuard(auth: Authenticator): AdminGuard {
  return async (ctx: Koa.Context): Promise<Principal> => {
    const p = await auth.authenticate(ctx);
    if (!p.isAdmin) throw errors.forbidden('admin_key_required', 'This endpoint needs the admin key');
    return p;
  };
}

/** Every route of the auth plugin: accounts and keys (admin), then a key's own view. */
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

/** POST/GET /v1/accounts, GET /v1/accounts/:id, POST /v1/accounts/:id/credits (admin). */
function registerAccountRoutes(router: Router, store: Store, admin: AdminGuard): void {
  router.post('/v1/accounts', async (ctx) => {
    await admin(ctx);
    const b = await readAccount(ctx);
    const a = await store.accounts.create({
      name: b.name,
      email: b.email ?? null,
      credits: money(b.credits ?? 0, 'credits'),
      customPricing: b.custom_pricing ?? false,
    });
    ctx.status = 201;
    ctx.body = { data: accountJson(a) };
  });
  router.get('/v1/accounts', async (ctx) => {
    await admin(ctx);
    const { limit, offset } = paging(ctx);
    ctx.body = { data: (await store.accounts.list(limit, offset)).map(accountJson) };
  });
  router.get('/v1/accounts/:id', async (ctx) => {
    await admin(ctx);
    ctx.body = { data: accountJson(await accountOr404(store, ctx.params.id)) };
  });
  router.post('/v1/accounts/:id/credits', async (ctx) => {
    await admin(ctx);
    const { amount } = await readAmount(ctx);
    const a = await addCreditsChecked(store, ctx.params.id, amount);
    if (!a) throw errors.notFound('account_not_found', `No account '${ctx.params.id.slice(0, 64)}'`);
    ctx.body = { data: accountJson(a) };
  });
}

/** POST/GET /v1/keys, GET/PATCH/DELETE /v1/keys/:hash (admin); a changed key is forgotten by this replica's cache. */
function registerKeyRoutes(router: Router, store: Store, auth: Authenticator, admin: AdminGuard): void {
  router.post('/v1/keys', async (ctx) => {
    await admin(ctx);
    const b = await readNewKey(ctx);
    await accountOr404(store, b.account_id);
    const { raw, key } = await issueKey(store.keys, {
      accountId: b.account_id,
      name: b.name,
      limit: b.limit === undefined || b.limit === null ? null : money(b.limit, 'limit'),
      limitReset: b.limit_reset ?? null,
      expiresAt: parseDate(b.expires_at),
    });
    ctx.status = 201;
    ctx.body = { key: raw, data: keyJson(key) };
  });
  router.get('/v1/keys', async (ctx) => {
    await admin(ctx);
    const { limit, offset } = paging(ctx);
    const accountId = typeof ctx.query.account_id === 'string' ? ctx.query.account_id : undefined;
    ctx.body = { data: (await store.keys.list({ accountId, limit, offset })).map(keyJson) };
  });
  router.get('/v1/keys/:hash', async (ctx) => {
    await admin(ctx);
    ctx.body = { data: keyJson(await keyOr404(store, ctx.params.hash)) };
  });
  router.patch('/v1/keys/:hash', async (ctx) => {
    await admin(ctx);
    await keyOr404(store, ctx.params.hash);
    const b = await readKeyPatch(ctx);
    const k = await store.keys.update(ctx.params.hash, {
      name: b.name,
      disabled: b.disabled,
      limit: b.limit === undefined ? undefined : b.limit === null ? null : money(b.limit, 'limit'),
      limitReset: b.limit_reset,
    });
    auth.forget(ctx.params.hash);
    ctx.body = { data: keyJson(k as ApiKey) };
  });
  router.delete('/v1/keys/:hash', async (ctx) => {
    await admin(ctx);
    await keyOr404(store, ctx.params.hash);
    await store.keys.delete(ctx.params.hash);
    auth.forget(ctx.params.hash);
    ctx.body = { data: { hash: ctx.params.hash, deleted: true } };
  });
}

/** GET /v1/key and GET /v1/credits: what any key (the latter: an account's key) may ask about itself. */
function registerOwnRoutes(router: Router, store: Store, auth: Authenticator): void {
  router.get('/v1/key', async (ctx) => {
    const p = await auth.authenticate(ctx);
    if (p.isAdmin) {
      ctx.body = {
        data: { label: 'admin', name: 'admin', usage: 0, limit: null, limit_remaining: null, is_admin: true },
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
