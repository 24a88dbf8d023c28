import type Router from '@koa/router';
import {
  accountJson,
  addCreditsChecked,
  errors,
  issueKey,
  keyJson,
  money,
  num,
  readAccount,
  readAmount,
  readKeyPatch,
  readNewKey,
  requireRole,
  type SharedServices,
  type Store,
} from '../../src/plugin';
import { settingsSummaries } from './api-settings';
import { limitParam, qs } from './params';
import { whereSql } from './sql';
import { audit } from './audit';
import { principalOf, type ConsoleSession } from './session';

type Ctx = Parameters<Router.Middleware>[0];
type Require = (ctx: Ctx) => Promise<ConsoleSession>;

function cursorOut(t: unknown, id: unknown): string {
  return Buffer.from(JSON.stringify([num(t), String(id)])).toString('base64url');
}

function cursorIn(s: string | undefined): [number, string] | undefined {
  if (s === undefined) return undefined;
  try {
    const v = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && typeof v[0] === 'number' && typeof v[1] === 'string') return [v[0], v[1]];
  } catch {
    // fall through
  }
  throw errors.invalidRequest('cursor is not one this endpoint gave out', 'cursor', 'invalid_cursor');
}

/** Changes to accounts and keys need the operator role (403 `role_required` naming it otherwise). */
function operator(s: ConsoleSession): ConsoleSession {
  requireRole(principalOf(s), 'operator');
  return s;
}

export interface KeyRouteDeps {
  store: Store;
  need: Require;
  /** Drop a key from the auth cache at once (a disable takes effect on the next request). */
  forget: (hash: string) => void;
  /** Where other plugins' settings sections are (their summaries fill the lists' Settings column). */
  shared: SharedServices;
}

/**
 * Accounts and keys for the console, newest first with keyset cursors and a search: the admin sees and
 * changes every account; an account session sees its own account and keys, read-only.
 * `forget` drops a key from the auth cache at once (disable takes effect on the next request).
 */
export function registerKeyRoutes(router: Router, deps: KeyRouteDeps): void {
  const { store, need, forget, shared } = deps;
  registerAccountRoutes(router, store, need);
  router.get('/console/api/keys', async (ctx) => {
    const s = await need(ctx);
    const page = await keysPage(store, s, ctx);
    const settings = await settingsSummaries(
      shared,
      s,
      'key',
      page.data.map((k) => k.hash),
    );
    ctx.body = { ...page, data: page.data.map((k) => ({ ...k, settings: settings.get(k.hash) ?? {} })) };
  });
  router.post('/console/api/keys', async (ctx) => {
    const s = operator(await need(ctx));
    const created = await createKey(store, ctx);
    await audit(store, ctx, s, { action: 'key.create', target: created.data.hash, after: created.data });
    ctx.status = 201;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = created;
  });
  router.delete('/console/api/keys/:hash', async (ctx) => {
    const s = operator(await need(ctx));
    const hash = ctx.params.hash;
    const before = /^[0-9a-f]{64}$/.test(hash) ? await store.keys.get(hash) : undefined;
    if (!before || !(s.isAdmin || before.accountId === s.accountId) || !(await store.keys.delete(hash)))
      throw errors.notFound('key_not_found', 'No key with that hash');
    forget(hash);
    await audit(store, ctx, s, { action: 'key.delete', target: hash, before: keyJson(before) });
    ctx.body = { data: { hash, deleted: true } };
  });
  router.patch('/console/api/keys/:hash', async (ctx) => {
    const s = operator(await need(ctx));
    const before = await store.keys.get(ctx.params.hash);
    const patched = await patchKey(store, ctx, forget);
    await audit(store, ctx, s, {
      action: 'key.update',
      target: ctx.params.hash,
      before: before ? keyJson(before) : undefined,
      after: patched.data,
    });
    ctx.body = patched;
  });
}

/** GET the accounts a session sees (one page), POST a new account, POST credits to one (admin only). */
function registerAccountRoutes(router: Router, store: Store, need: Require): void {
  router.get('/console/api/accounts', async (ctx) => {
    const s = await need(ctx);
    const limit = limitParam(ctx, 50, 200);
    const after = cursorIn(qs(ctx, 'cursor', 500));
    const where = [s.isAdmin ? '1 = 1' : 'id = ?'];
    const params: Array<string | number> = s.isAdmin ? [] : [s.accountId];
    const q = qs(ctx, 'q', 100)?.trim();
    if (q) {
      where.push("(LOWER(name) LIKE ? ESCAPE '\\' OR id = ?)");
      params.push(`%${likeEscape(q.toLowerCase())}%`, q);
    }
    // Newest first (order=oldest the other way), keyset-paged.
    const oldest = qs(ctx, 'order', 10) === 'oldest';
    const cmp = oldest ? '>' : '<';
    const dir = oldest ? '' : ' DESC';
    if (after) {
      where.push(`(created_at ${cmp} ? OR (created_at = ? AND id ${cmp} ?))`);
      params.push(after[0], after[0], after[1]);
    }
    const rows = await store.db.all<{ id: string; created_at: unknown }>(
      `SELECT id, created_at FROM accounts WHERE ${where.join(' AND ')} ORDER BY created_at${dir}, id${dir} LIMIT ?`,
      [...params, limit + 1],
    );
    const page = rows.slice(0, limit);
    const accounts = await Promise.all(page.map((r) => store.accounts.get(r.id)));
    const last = page[page.length - 1];
    ctx.body = {
      data: accounts.filter((a) => a !== undefined).map((a) => accountJson(a)),
      next_cursor: rows.length > limit && last ? cursorOut(last.created_at, last.id) : null,
    };
  });

  router.post('/console/api/accounts', async (ctx) => {
    const s = operator(await need(ctx));
    const b = await readAccount(ctx);
    const created = accountJson(
      await store.accounts.create({
        name: b.name,
        email: b.email ?? null,
        credits: money(b.credits ?? 0, 'credits'),
        customPricing: b.custom_pricing ?? false,
      }),
    );
    await audit(store, ctx, s, { action: 'account.create', target: created.id, after: created });
    ctx.status = 201;
    ctx.body = { data: created };
  });

  router.post('/console/api/accounts/:id/credits', async (ctx) => {
    const s = operator(await need(ctx));
    const { amount } = await readAmount(ctx);
    const before = await store.accounts.get(ctx.params.id);
    const a = await addCreditsChecked(store, ctx.params.id, amount);
    if (!a) throw errors.notFound('account_not_found', `No account '${ctx.params.id.slice(0, 64)}'`);
    ctx.body = { data: accountJson(a) };
    await audit(store, ctx, s, {
      action: 'credits.add',
      target: a.id,
      before: before ? accountJson(before) : undefined,
      after: accountJson(a),
    });
  });
}

/**
 * One page of the keys a session sees (its account's, or for the admin one account's or all), newest first (`order=
 * oldest` the other way), with keyset cursors so that every key is reachable however many there are; `q` finds keys
 * by name (a part of it), label or the start of the hash.
 */
async function keysPage(store: Store, s: ConsoleSession, ctx: Ctx) {
  const limit = limitParam(ctx, 50, 200);
  const after = cursorIn(qs(ctx, 'cursor', 500));
  const account = s.isAdmin ? qs(ctx, 'account_id', 64) : s.accountId;
  const oldest = qs(ctx, 'order', 10) === 'oldest';
  const where: string[] = [];
  const params: Array<string | number> = [];
  if (account) {
    where.push('account_id = ?');
    params.push(account);
  }
  const q = qs(ctx, 'q', 100)?.trim();
  if (q) {
    where.push("(LOWER(name) LIKE ? ESCAPE '\\' OR label = ? OR hash LIKE ?)");
    params.push(`%${likeEscape(q.toLowerCase())}%`, q, `${likeEscape(q.toLowerCase())}%`);
  }
  if (after) {
    const cmp = oldest ? '>' : '<';
    where.push(`(created_at ${cmp} ? OR (created_at = ? AND hash ${cmp} ?))`);
    params.push(after[0], after[0], after[1]);
  }
  const dir = oldest ? '' : ' DESC';
  const rows = await store.db.all<{ hash: string; created_at: unknown }>(
    `SELECT hash, created_at FROM api_keys ${whereSql(where)} ORDER BY created_at${dir}, hash${dir} LIMIT ?`,
    [...params, limit + 1],
  );
  const page = rows.slice(0, limit);
  const keys = await Promise.all(page.map((r) => store.keys.get(r.hash)));
  const last = page[page.length - 1];
  return {
    data: keys.filter((k) => k !== undefined).map((k) => keyJson(k)),
    next_cursor: rows.length > limit && last ? cursorOut(last.created_at, last.hash) : null,
  };
}

/** `%`, `_` and the escape itself, taken literally in a LIKE pattern (ESCAPE '\'). */
function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** A new key of an existing account; its raw value is in this answer only. */
async function createKey(store: Store, ctx: Ctx) {
  const b = await readNewKey(ctx);
  if (!(await store.accounts.get(b.account_id)))
    throw errors.notFound('account_not_found', `No account '${b.account_id}'`);
  const expiresAt = b.expires_at ? Date.parse(b.expires_at) : null;
  if (Number.isNaN(expiresAt))
    throw errors.invalidRequest('expires_at must be an ISO 8601 date-time', 'expires_at', 'invalid_field');
  const { raw, key } = await issueKey(store.keys, {
    accountId: b.account_id,
    name: b.name,
    limit: b.limit == null ? null : money(b.limit, 'limit'),
    limitReset: b.limit_reset ?? null,
    expiresAt,
  });
  return { key: raw, data: keyJson(key) };
}

/** A key's name, disabled flag or credit limit changed; the auth cache forgets it at once. */
async function patchKey(store: Store, ctx: Ctx, forget: (hash: string) => void) {
  const hash = ctx.params.hash;
  if (!/^[0-9a-f]{64}$/.test(hash) || !(await store.keys.get(hash)))
    throw errors.notFound('key_not_found', 'No key with that hash');
  const b = await readKeyPatch(ctx);
  const k = await store.keys.update(hash, {
    name: b.name,
    disabled: b.disabled,
    limit: b.limit === undefined ? undefined : b.limit === null ? null : money(b.limit, 'limit'),
    limitReset: b.limit_reset,
  });
  forget(hash);
  if (!k) throw errors.notFound('key_not_found', 'No key with that hash');
  return { data: keyJson(k) };
}
