import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoreConfig } from '../../../src/config/types';
import { consoleMigrations } from '../../../plugins/console/store/migrations';
import { openStore, type Store } from '../../../src/store/index';
import { builtinExtensions } from '../../helpers/store';
import { GENERATION_INSERT, generationParams, type Generation } from '../../../src/store/generations';
import { insertRecords, makeRecords } from '../../helpers/usage-records';
import { UsageRepo, DAY_MS, dayOf, dayString, type Dimension } from '../../../plugins/console/usage';
import { POSTGRES_URL, freshPostgresUrl } from '../../helpers/postgres';
import { startTestGateway, testConfig, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, makeAccountKey } from '../../helpers/accounts';

/** The same aggregation, done naively in JS, as the oracle. */
function naive(
  rows: Generation[],
  fromDay: number,
  toDay: number,
  accountId?: string,
): Map<string, { requests: number; cost: number; prompt: number; errors: number }> {
  const m = new Map<string, { requests: number; cost: number; prompt: number; errors: number }>();
  for (const g of rows) {
    const day = dayOf(g.createdAt);
    if (day < fromDay || day > toDay || (accountId && g.accountId !== accountId)) continue;
    const k = [dayString(day), g.keyHash ?? '', g.model, g.appReferer ?? ''].join('|');
    const e = m.get(k) ?? { requests: 0, cost: 0, prompt: 0, errors: 0 };
    e.requests++;
    e.cost += g.cost;
    e.prompt += g.promptTokens;
    if (g.status === 'error') e.errors++;
    m.set(k, e);
  }
  return m;
}

function contract(name: string, open: () => Promise<Store>) {
  describe(`usage analytics on ${name}`, function () {
    this.timeout(60_000);
    let store: Store;
    const now = Date.UTC(2026, 5, 15, 12);
    before(async () => {
      store = await open();
    });
    after(async () => store?.close());

    it('daily aggregates, kept as records are written, equal a naive sum, page by page with cursors', async () => {
      const usage = new UsageRepo(store.db);
      const all = [...makeRecords(3000, now - 60_000, 20, 1), ...makeRecords(200, now, 0.0005, 2)];
      await insertRecords(store, all);
      const group: Dimension[] = ['date', 'key', 'model', 'app'];
      const fromDay = dayOf(now) - 29;
      const toDay = dayOf(now);
      for (const accountId of [undefined, 'acct_1']) {
        const expected = naive(all, fromDay, toDay, accountId);
        const got = new Map<string, { requests: number; cost: number; prompt: number; errors: number }>();
        let after: Array<string | number> | undefined;
        let pages = 0;
        for (;;) {
          const rows = await usage.query({ fromDay, toDay, accountId, groupBy: group, limit: 97, after });
          pages++;
          for (const r of rows) {
            const k = [dayString(r.day as number), r.keyHash, r.model, r.app].join('|');
            expect(got.has(k), `row ${k} appears on two pages`).to.equal(false);
            got.set(k, { requests: r.requests, cost: r.cost, prompt: r.promptTokens, errors: r.errors });
          }
          if (rows.length < 97) break;
          const last = rows[rows.length - 1];
          after = [last.day as number, last.keyHash as string, last.model as string, last.app as string];
        }
        expect(pages).to.be.greaterThan(2);
        expect(got).to.deep.equal(expected);
        // Daily totals come from the per-account table: the same sums per day.
        const perDay = new Map<string, number>();
        for (const [k, v] of expected) perDay.set(k.split('|')[0], (perDay.get(k.split('|')[0]) ?? 0) + v.cost);
        const totals = await usage.query({ fromDay, toDay, accountId, groupBy: ['date'], limit: 31 });
        expect(new Map(totals.map((r) => [dayString(r.day as number), r.cost]))).to.deep.equal(perDay);
      }
      const total = await usage.query({ fromDay, toDay, groupBy: [], limit: 1 });
      expect(total[0].requests).to.equal(all.length);
      expect(total[0].cost).to.equal(all.reduce((a, g) => a + g.cost, 0));
      const minutes = await store.db.get<{ n: unknown; c: unknown }>(
        'SELECT SUM(requests) AS n, SUM(cost) AS c FROM usage_minute',
      );
      expect([Number(minutes?.n), Number(minutes?.c)]).to.deep.equal([all.length, total[0].cost]);
    });

    it('a record that does not commit leaves no aggregate behind (the same transaction)', async () => {
      const before = await store.db.get<{ n: unknown }>('SELECT SUM(requests) AS n FROM usage_daily');
      const [g] = makeRecords(1, now, 1, 9);
      await store.db
        .tx(async (t) => {
          await t.run(GENERATION_INSERT, generationParams(g));
          throw new Error('rolled back');
        })
        .catch(() => undefined);
      const after = await store.db.get<{ n: unknown }>('SELECT SUM(requests) AS n FROM usage_daily');
      expect(Number(after?.n)).to.equal(Number(before?.n));
    });

    it('each outcome is counted: a stream cut by upstream_timeout is a timeout and an error; 4xx; cancelled', async () => {
      const at = now + 40 * DAY_MS;
      const base = makeRecords(5, at, 0.0001, 11).map((g) => ({ ...g, accountId: 'acct_outcomes' }));
      const rows: Generation[] = [
        { ...base[0], status: 'completed' },
        { ...base[1], status: 'incomplete', errorCode: 'upstream_timeout', streamed: true },
        { ...base[2], status: 'error', errorCode: 'upstream_error' },
        { ...base[3], status: 'error', errorCode: 'rate_limit_exceeded', httpStatus: 429 },
        { ...base[4], status: 'incomplete', cancelled: true, errorCode: 'client_closed_request' },
      ];
      await insertRecords(store, rows);
      const [r] = await new UsageRepo(store.db).query({
        fromDay: dayOf(at) - 1,
        toDay: dayOf(at),
        accountId: 'acct_outcomes',
        groupBy: [],
        limit: 1,
      });
      expect(r).to.include({ requests: 5, errors: 3, timeouts: 1, clientErrors: 1, cancelled: 1 });
    });

    it('one day (OpenRouter `date`) and a key filter', async () => {
      const usage = new UsageRepo(store.db);
      const day = dayOf(now) - 3;
      const rows = await usage.query({ fromDay: day, toDay: day, keyHash: 'k1', groupBy: ['date', 'key'], limit: 10 });
      expect(rows).to.have.length(1);
      expect(rows[0]).to.include({ day, keyHash: 'k1' });
    });
  });
}

contract('SQLite', () => openStore({ driver: 'memory' }, {}, builtinExtensions('console')));

/**
 * console@3 on a store that console@1-2 made: the days that have records are counted again from them (outcomes
 * included); an older day, whose records retention deleted, keeps its aggregate.
 */
function backfill(name: string, location: () => Promise<StoreConfig>) {
  it(`console@3 backfills the aggregates from the records there are (${name})`, async function () {
    this.timeout(60_000);
    const config = await location();
    const older = { migrations: consoleMigrations.filter((m) => m.version < 3), procedures: [] };
    const now = Date.UTC(2026, 5, 15, 12);
    const rows = makeRecords(1500, now, 10, 21);
    const old = await openStore(config, {}, older);
    await insertRecords(old, rows);
    const gone = dayOf(now) - 100;
    await old.db.run(
      'INSERT INTO usage_daily_accounts (day, account_id, requests, errors, prompt_tokens, completion_tokens, ' +
        "reasoning_tokens, cached_tokens, cost, latency_ms_sum) VALUES (?, 'acct_gone', 7, 0, 0, 0, 0, 0, 70, 0)",
      [gone],
    );
    await old.close();
    const store = await openStore(config, {}, builtinExtensions('console'));
    try {
      const usage = new UsageRepo(store.db);
      const got = await usage.query({ fromDay: gone, toDay: dayOf(now), groupBy: ['date'], limit: 200 });
      const expected = new Map<number, number>([[gone, 7]]);
      for (const g of rows) expected.set(dayOf(g.createdAt), (expected.get(dayOf(g.createdAt)) ?? 0) + 1);
      expect(new Map(got.map((r) => [r.day as number, r.requests]))).to.deep.equal(expected);
      const [all] = await usage.query({ fromDay: dayOf(now) - 20, toDay: dayOf(now), groupBy: [], limit: 1 });
      expect(all.errors).to.equal(rows.filter((g) => g.status === 'error').length);
      const minutes = await store.db.get<{ n: unknown }>('SELECT SUM(requests) AS n FROM usage_minute');
      expect(Number(minutes?.n)).to.equal(rows.length);
    } finally {
      await store.close();
    }
  });
}

describe('usage aggregates of an older store', () => {
  backfill('SQLite', async () => ({
    driver: 'sqlite',
    path: join(mkdtempSync(join(tmpdir(), 'gw-backfill-')), 'g.db'),
  }));
  if (POSTGRES_URL)
    backfill('PostgreSQL', async () => ({ driver: 'postgres', url: await freshPostgresUrl(), pool_size: 2 }));
});

if (POSTGRES_URL)
  contract('PostgreSQL', async () =>
    openStore({ driver: 'postgres', url: await freshPostgresUrl(), pool_size: 4 }, {}, builtinExtensions('console')),
  );

describe('GET /v1/activity', function () {
  this.timeout(60_000);
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway(
      testConfig({ plugins: ['auth', 'console', 'credit', 'routing'] }, { GATEWAY_ADMIN_KEY: ADMIN_KEY }),
    );
  });
  after(async () => gw?.stop());

  it("answers OpenRouter's shape; an account key sees only its account; bad parameters are 400s", async () => {
    const a = await makeAccountKey(gw, { name: 'a' });
    const b = await makeAccountKey(gw, { name: 'b' });
    for (const k of [a.key, a.key, b.key]) {
      const r = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'mock/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(r.status).to.equal(200);
    }
    const get = async (key: string, q: string) => {
      const r = await fetch(`${gw.url}/v1/activity${q}`, { headers: { authorization: `Bearer ${key}` } });
      return {
        status: r.status,
        body: (await r.json()) as {
          data: Array<Record<string, unknown>>;
          next_cursor: string | null;
          error?: { code: string };
        },
      };
    };
    const mine = await get(a.key, '?account_id=' + b.accountId);
    expect(mine.status).to.equal(200);
    expect(mine.body.data).to.have.length(1);
    expect(mine.body.data[0]).to.include({
      date: new Date().toISOString().slice(0, 10),
      model: 'mock/gpt-4o-mini',
      requests: 2,
      api_key_hash: a.hash,
      account_id: a.accountId,
      byok_usage_inference: 0,
    });
    expect(mine.body.data[0]).to.have.keys(
      'date',
      'model',
      'model_permaslug',
      'endpoint_id',
      'provider_name',
      'usage',
      'byok_usage_inference',
      'requests',
      'prompt_tokens',
      'completion_tokens',
      'reasoning_tokens',
      'cached_tokens',
      'errors',
      'timeouts',
      'cancelled',
      'client_errors',
      'mean_latency_ms',
      'api_key_hash',
      'account_id',
      'app',
    );
    const admin = await get(ADMIN_KEY, '?group_by=account&limit=1');
    expect(admin.body.data).to.have.length(1);
    expect(admin.body.next_cursor).to.be.a('string');
    const second = await get(ADMIN_KEY, `?group_by=account&limit=1&cursor=${admin.body.next_cursor}`);
    expect(second.body.data.map((r) => r.account_id)).to.not.include(admin.body.data[0].account_id);
    expect((await get(ADMIN_KEY, '?date=2026-13-01')).status).to.equal(400);
    expect((await get(ADMIN_KEY, '?from=2026-01-10&to=2026-01-01')).status).to.equal(400);
    expect((await get(ADMIN_KEY, '?cursor=nonsense')).body.error?.code).to.equal('invalid_cursor');
    expect((await get(ADMIN_KEY, '?group_by=colour')).status).to.equal(400);
    expect((await fetch(`${gw.url}/v1/activity`)).status).to.equal(401);
  });

  it('CSV export streams page by page: every group once, pages read as the client reads', async () => {
    const store = gw.services.store;
    const now = Date.now();
    await insertRecords(
      store,
      makeRecords(6000, now, 25, 3).map((g) => ({ ...g, keyHash: `${g.keyHash ?? 'x'}-${g.id.slice(-3)}` })),
    );
    let reads = 0;
    const prev = store.db.observer;
    store.db.observer = (op, s, f) => {
      if (op === 'all') reads++;
      prev?.(op, s, f);
    };
    const res = await fetch(`${gw.url}/v1/activity?format=csv&group_by=date,key`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(res.headers.get('content-type')).to.include('text/csv');
    expect(res.headers.get('transfer-encoding')).to.equal('chunked');
    const lines = (await res.text()).trim().split('\n');
    store.db.observer = prev;
    expect(lines[0]).to.match(/^date,model,provider_name,endpoint_id,api_key_hash/);
    const body = lines.slice(1);
    expect(new Set(body).size).to.equal(body.length);
    const total = await gw.services.store.db.get<{ n: unknown }>(
      "SELECT COUNT(*) AS n FROM (SELECT DISTINCT CAST(created_at / 86400000 AS INTEGER), COALESCE(key_hash, '') FROM generations WHERE created_at >= ?) x",
      [(dayOf(now) - 29) * DAY_MS],
    );
    expect(body.length).to.equal(Number(total?.n));
    expect(body.length).to.be.greaterThan(2000);
    expect(reads, 'one query per 1,000-row page').to.be.at.least(Math.ceil(body.length / 1000));
  });
});
