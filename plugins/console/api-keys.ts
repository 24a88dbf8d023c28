import type Router from '@koa/router';
import {
  errors,
  issueKey,
  keyJson,
  money,
  readKeyPatch,
  readNewKey,
  type SharedServices,
  type Store,
} from '../../src/plugin';
import { registerAccountRoutes } from './api-accounts';
import { settingsSummaries } from './api-settings';
import { after, cursorIn, cursorOut, likeEscape, type SortKey } from './keyset';
import { operator } from './roles';
import { limitParam, qs } from './params';
import { whereSql } from './sql';
import { audit } from './audit';
import type { ConsoleSession } from './session';

type Ctx = Parameters<Router.Middleware>[0];
type Require = (ctx: Ctx) => Promise<ConsoleSession>;

const CREATED: SortKey = { sql: 'created_at', numeric: true };

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
  registerAccountRoutes(router, deps);
  router.get('/console/api/keys', async (ctx) => {
    const s = await need(ctx);
    const page = await keysPage(store, s, ctx);
    const settings = await settingsSummaries(
      shared,
      s,
      'key',
      page.data.map((k) => k.hash),
    );
    const names = await accountNames(
      store,
      page.data.map((k) => k.account_id),
    );
    ctx.body = {
      ...page,
      data: page.data.map((k) => ({
        ...k,
        account_name: names.get(k.account_id) ?? null,
        settings: settings.get(k.hash) ?? {},
      })),
    };
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

/**
 * One page of the keys a session sees (its account's, or for the admin one account's or all), newest first (`order=
 * oldest` the other way), with keyset cursors so that every key is reachable however many there are; `q` finds keys
 * by name (a part of it), label or the start of the hash.
 */
async function keysPage(store: Store, s: ConsoleSession, ctx: Ctx) {
  const limit = limitParam(ctx, 50, 200);
  const account = s.isAdmin ? qs(ctx, 'account_id', 64) : s.accountId;
  const desc = qs(ctx, 'order', 10) !== 'oldest';
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
  const c = cursorIn(qs(ctx, 'cursor', 500), 'created');
  if (c) {
    const k = after(c, CREATED, 'hash', desc);
    where.push(k.sql);
    params.push(...k.params);
  }
  const dir = desc ? ' DESC' : '';
  const rows = await store.db.all<{ hash: string; created_at: unknown }>(
    `SELECT hash, created_at FROM api_keys ${whereSql(where)} ORDER BY created_at${dir}, hash${dir} LIMIT ?`,
    [...params, limit + 1],
  );
  const page = rows.slice(0, limit);
  const keys = await Promise.all(page.map((r) => store.keys.get(r.hash)));
  const last = page[page.length - 1];
  return {
    data: keys.filter((k) => k !== undefined).map((k) => keyJson(k)),
    next_cursor: rows.length > limit && last ? cursorOut('created', last.created_at, last.hash, true) : null,
  };
}

/** The names of a page's accounts (the accounts list is paged: a key's account may be on another page). */
async function accountNames(store: Store, ids: string[]): Promise<Map<string, string>> {
  const unique = [...new Set(ids)];
  const accounts = await Promise.all(unique.map((id) => store.accounts.get(id)));
  return new Map(accounts.filter((a) => a !== undefined).map((a) => [a.id, a.name]));
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
