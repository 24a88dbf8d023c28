/**
 * @module
 * Accounts in the console: GET /console/api/accounts (searched, sorted and paged on the server: `q` a part of the
 * name or the whole id; `sort` created (default, newest first), name or balance; `dir` asc or desc; `limit`,
 * `cursor`; with `total`, the count of what the search matches), POST a new account and POST credits to one
 * (operator role, audited). An account's own session sees its own account only.
 */
import type Router from '@koa/router';
import { accountJson, addCreditsChecked, errors, money, readAccount, readAmount, type Store } from '../../src/plugin';
import { settingsSummaries } from './api-settings';
import { audit } from './audit';
import type { KeyRouteDeps } from './api-keys';
import { after, cursorIn, cursorOut, likeEscape, type SortKey } from './keyset';
import { limitParam, qs } from './params';
import { operator } from './roles';
import type { ConsoleSession } from './session';
import { whereSql } from './sql';

type Ctx = Parameters<Router.Middleware>[0];

const SORTS: Record<string, SortKey> = {
  created: { sql: 'created_at', numeric: true },
  name: { sql: 'LOWER(name)', numeric: false },
  balance: { sql: '(credits - usage)', numeric: true },
};

/** The sort and direction asked for: `sort`, `dir` (`order=oldest` is the old spelling of created, ascending). */
function orderOf(ctx: Ctx): { sort: string; key: SortKey; desc: boolean } {
  const oldest = qs(ctx, 'order', 10) === 'oldest';
  const sort = qs(ctx, 'sort', 20) ?? 'created';
  if (!Object.hasOwn(SORTS, sort))
    throw errors.invalidRequest('sort takes: created, name, balance', 'sort', 'invalid_parameter');
  const dir = qs(ctx, 'dir', 4);
  if (dir !== undefined && dir !== 'asc' && dir !== 'desc')
    throw errors.invalidRequest('dir takes: asc, desc', 'dir', 'invalid_parameter');
  // Newest first, the largest balance first, names A to Z, unless asked otherwise.
  const desc = dir ? dir === 'desc' : oldest ? false : sort !== 'name';
  return { sort, key: SORTS[sort], desc };
}

/** One page of the accounts a session sees, in the order asked, with the count of all that match. */
async function accountsPage(store: Store, s: ConsoleSession, ctx: Ctx) {
  const limit = limitParam(ctx, 50, 200);
  const { sort, key, desc } = orderOf(ctx);
  const where = [s.isAdmin ? '1 = 1' : 'id = ?'];
  const params: Array<string | number> = s.isAdmin ? [] : [s.accountId];
  const q = qs(ctx, 'q', 100)?.trim();
  if (q) {
    where.push("(LOWER(name) LIKE ? ESCAPE '\\' OR id = ?)");
    params.push(`%${likeEscape(q.toLowerCase())}%`, q);
  }
  const counted = await store.db.get<{ n: unknown }>(`SELECT COUNT(*) AS n FROM accounts ${whereSql(where)}`, params);
  const c = cursorIn(qs(ctx, 'cursor', 500), sort);
  const keyset = c ? after(c, key, 'id', desc) : undefined;
  const dir = desc ? ' DESC' : '';
  const rows = await store.db.all<{ id: string; v: unknown }>(
    `SELECT id, ${key.sql} AS v FROM accounts ${whereSql(keyset ? [...where, keyset.sql] : where)} ` +
      `ORDER BY ${key.sql}${dir}, id${dir} LIMIT ?`,
    [...params, ...(keyset?.params ?? []), limit + 1],
  );
  const page = rows.slice(0, limit);
  const accounts = (await Promise.all(page.map((r) => store.accounts.get(r.id)))).filter((a) => a !== undefined);
  const last = page[page.length - 1];
  return {
    data: accounts.map((a) => accountJson(a)),
    total: Number(counted?.n ?? 0),
    next_cursor: rows.length > limit && last ? cursorOut(sort, last.v, last.id, key.numeric) : null,
  };
}

/** GET the accounts a session sees (one page), POST a new account, POST credits to one (operator). */
export function registerAccountRoutes(router: Router, deps: KeyRouteDeps): void {
  const { store, need, shared } = deps;
  router.get('/console/api/accounts', async (ctx) => {
    const s = await need(ctx);
    const page = await accountsPage(store, s, ctx);
    const settings = await settingsSummaries(
      shared,
      s,
      'account',
      page.data.map((a) => a.id),
    );
    ctx.body = { ...page, data: page.data.map((a) => ({ ...a, settings: settings.get(a.id) ?? {} })) };
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
