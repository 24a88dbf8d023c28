import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store } from '../../../src/store/index';
import { driveAsync, insertRows, type Param } from '../../../src/store/db';
import { GENERATION_COLUMNS, generationParams, type Generation } from '../../../src/store/generations';
import { builtinExtensions } from '../../helpers/store';
import { freshPostgresUrl, POSTGRES_URL } from '../../helpers/postgres';
import { postJson, startTestGateway, testConfig, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY } from '../../helpers/accounts';

/**
 * 1,000,000 generation records (issue 49), made through the store's bulk path (insertRows, the multi-row INSERT the
 * settlements use), a third of them in the last day: every console API answers in under 50 ms (the median of five
 * calls, over HTTP), and every number it gives equals a direct count over the records.
 */
/** GATEWAY_TEST_MILLION=1000000 runs it (how many records); unset, it is skipped: filling takes minutes. */
const N = Number(process.env.GATEWAY_TEST_MILLION ?? 0);
const DAY = 86_400_000;

function record(i: number, now: number): Param[] {
  // A cheap deterministic spread: 60 keys of 3 accounts, each key used by one app, 8 models on 2 deployments, each
  // outcome, a third of the records within the last day.
  const h = (i * 2654435761) >>> 0;
  const key = h % 60;
  const age = i % 3 === 0 ? h % DAY : h % (30 * DAY);
  const kind = h % 100;
  const g: Generation = {
    id: `gen-m-${i}`,
    accountId: `acct_m${key % 3}`,
    keyHash: `key-m-${key}`,
    model: `vendor/model-${(h >>> 8) % 8}`,
    provider: 'p',
    deployment: `p/d${(h >>> 4) % 2}`,
    promptTokens: h % 2000,
    completionTokens: (h >>> 3) % 800,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    cost: h % 100_000,
    latencyMs: (h >>> 5) % 3000,
    ttftMs: null,
    finishReason: 'stop',
    streamed: kind % 2 === 0,
    cancelled: kind === 1,
    status: kind < 3 ? 'error' : kind === 3 || kind === 1 ? 'incomplete' : 'completed',
    errorCode: kind === 0 ? 'upstream_error' : kind === 2 ? 'invalid_api_key' : kind === 3 ? 'upstream_timeout' : null,
    httpStatus: kind === 2 ? 401 : null,
    appReferer: `https://app${key % 10}.example`,
    appTitle: null,
    user: null,
    metadata: null,
    createdAt: now - 1 - age,
  };
  return generationParams(g);
}

async function fill(store: Store, now: number): Promise<number> {
  const started = performance.now();
  const bulk = {
    name: 'test.bulk-records',
    body: (rows: Param[][]) => insertRows('generations', GENERATION_COLUMNS, rows),
  };
  for (let at = 0; at < N; at += 5000) {
    const rows: Param[][] = [];
    for (let i = at; i < Math.min(N, at + 5000); i++) rows.push(record(i, now));
    await store.db.tx((t) => driveAsync(bulk, rows, t));
  }
  return performance.now() - started;
}

const count = async (store: Store, sql: string, params: Param[] = []) =>
  Object.fromEntries(
    Object.entries((await store.db.get<Record<string, unknown>>(sql, params)) ?? {}).map(([k, v]) => [
      k,
      Number(v ?? 0),
    ]),
  );

function suite(name: string, open: () => Promise<{ store: Store; done: () => Promise<void> }>) {
  describe(`console at ${N.toLocaleString('en-US')} records on ${name}`, function () {
    this.timeout(1_800_000);
    let store: Store;
    let done: () => Promise<void>;
    let gw: TestGateway;
    let cookie = '';
    const now = Date.now();
    const timings: Array<[string, number]> = [];

    before(async () => {
      ({ store, done } = await open());
      const ms = await fill(store, now);
      process.stdout.write(
        `      (${N.toLocaleString('en-US')} records and their aggregates written in ${(ms / 1000).toFixed(1)} s)\n`,
      );
      gw = await startTestGateway(
        testConfig({ plugins: ['auth', 'console', 'routing'] }, { GATEWAY_ADMIN_KEY: ADMIN_KEY }),
        { store },
      );
      const res = await postJson(`${gw.url}/console/api/session`, { key: ADMIN_KEY });
      cookie = (res.headers.get('set-cookie') ?? '').split(';')[0];
    });
    after(async () => {
      await gw?.stop();
      await done?.();
      process.stdout.write(`${timings.map(([p, ms]) => `      ${ms.toFixed(1).padStart(7)} ms  ${p}`).join('\n')}\n`);
    });

    /** GET a console API five times; its median time must be under 50 ms. */
    async function timed(path: string): Promise<Record<string, unknown>> {
      const times: number[] = [];
      let body: Record<string, unknown> = {};
      await fetch(`${gw.url}/console/api/${path}`, { headers: { cookie } }).then((r) => r.arrayBuffer()); // warm
      for (let i = 0; i < 5; i++) {
        const t = performance.now();
        const r = await fetch(`${gw.url}/console/api/${path}`, { headers: { cookie } });
        body = (await r.json()) as Record<string, unknown>;
        times.push(performance.now() - t);
        expect(r.status, path).to.equal(200);
      }
      const median = times.sort((a, b) => a - b)[2];
      timings.push([path, median]);
      expect(median, `${path}: median of five`).to.be.below(50);
      return body;
    }

    it('the overview of each window: under 50 ms, its totals and every bucket equal a direct count', async () => {
      for (const win of ['15m', '1h', '6h', '24h', '7d']) {
        for (const account of [undefined, 'acct_m1']) {
          const o = await timed(`overview?window=${win}${account ? `&account_id=${account}` : ''}`);
          const series = o.series as Array<{ t: string; requests: number; errors: number; cost: number }>;
          const step = (o.bucket_seconds as number) * 1000;
          const from = Date.parse(series[0].t);
          const to = Date.parse(series[series.length - 1].t) + step;
          const where = `created_at >= ? AND created_at < ?${account ? ' AND account_id = ?' : ''}`;
          const args: Param[] = account ? [from, to, account] : [from, to];
          const direct = await count(
            store,
            `SELECT COUNT(*) AS requests, SUM(cost) AS cost, SUM(prompt_tokens + completion_tokens) AS tokens,
              SUM(CASE WHEN http_status >= 400 AND http_status < 500 AND cancelled = 0 THEN 1 ELSE 0 END) AS client_errors,
              SUM(CASE WHEN cancelled = 1 THEN 1 ELSE 0 END) AS cancelled,
              SUM(CASE WHEN cancelled = 0 AND error_code = 'upstream_timeout' THEN 1 ELSE 0 END) AS timeouts,
              SUM(CASE WHEN cancelled = 0 AND (status = 'error' OR error_code IS NOT NULL) THEN 1 ELSE 0 END) AS errors
             FROM generations WHERE ${where}`,
            args,
          );
          const t = o.totals as Record<string, number>;
          expect(t.requests, `${win} requests`).to.equal(direct.requests).and.be.above(0);
          expect(Math.round(t.cost * 1e9), `${win} cost`).to.equal(direct.cost);
          expect(t.tokens).to.equal(direct.tokens);
          expect([t.errors, t.timeouts, t.client_errors, t.cancelled]).to.deep.equal([
            direct.errors,
            direct.timeouts,
            direct.client_errors,
            direct.cancelled,
          ]);
          // One bucket in the middle, counted directly.
          const mid = series[Math.floor(series.length / 2)];
          const b = await count(
            store,
            `SELECT COUNT(*) AS n FROM generations WHERE created_at >= ? AND created_at < ?${account ? ' AND account_id = ?' : ''}`,
            account
              ? [Date.parse(mid.t), Date.parse(mid.t) + step, account]
              : [Date.parse(mid.t), Date.parse(mid.t) + step],
          );
          expect(mid.requests, `${win} bucket ${mid.t}`).to.equal(b.n);
        }
      }
    });

    it('activity by day and by day and model, rankings: under 50 ms, equal to direct counts', async () => {
      const today = Math.floor(now / DAY);
      const byDay = (await timed('activity?group_by=date&limit=100')).data as Array<{ date: string; requests: number }>;
      const direct = await store.db.all<{ day: unknown; n: unknown }>(
        `SELECT CAST(created_at / ${DAY} AS INTEGER) AS day, COUNT(*) AS n FROM generations WHERE created_at >= ? GROUP BY 1`,
        [(today - 29) * DAY],
      );
      expect(new Map(byDay.map((r) => [r.date, r.requests]))).to.deep.equal(
        new Map(direct.map((r) => [new Date(Number(r.day) * DAY).toISOString().slice(0, 10), Number(r.n)])),
      );
      const byModel = (await timed('activity?group_by=date,model&limit=1000')).data as Array<{ requests: number }>;
      expect(byModel.reduce((a, r) => a + r.requests, 0)).to.equal(direct.reduce((a, r) => a + Number(r.n), 0));
      const ranks = (await timed('rankings?days=30')).data as Array<{ app: string; requests: number }>;
      const apps = await store.db.all<{ app: string; n: unknown }>(
        'SELECT app_referer AS app, COUNT(*) AS n FROM generations WHERE created_at >= ? GROUP BY app_referer',
        [(today - 29) * DAY],
      );
      expect(new Map(ranks.map((r) => [r.app, r.requests]))).to.deep.equal(
        new Map(apps.map((r) => [r.app, Number(r.n)])),
      );
    });

    it('records pages (each outcome, filters), models, accounts and keys: under 50 ms', async () => {
      const first = (await timed('records?limit=50')).data as Array<{ created_at: string }>;
      expect(first).to.have.length(50);
      for (const o of ['error', 'timeout', 'client_error', 'cancelled', 'upstream_error', 'success']) {
        const page = (await timed(`records?outcome=${o}&limit=50`)).data as Array<{ outcome: string }>;
        expect(page.length, o).to.equal(50);
        expect(
          page.every((r) => (o === 'error' ? r.outcome !== 'success' && r.outcome !== 'cancelled' : r.outcome === o)),
        ).to.equal(true);
      }
      await timed('records?account_id=acct_m2&model=vendor/model-3&limit=50');
      await timed('records?key_hash=key-m-7&limit=50');
      await timed('models');
      await timed('accounts?limit=50');
      await timed('keys?limit=50');
    });
  });
}

if (!N) describe('console at 1,000,000 records', () => it.skip('set GATEWAY_TEST_MILLION=1000000 to run it'));
else
  suite('SQLite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-million-'));
    const store = await openStore(
      { driver: 'sqlite', path: join(dir, 'g.db') },
      { redo: true },
      builtinExtensions('console', 'routing'),
    );
    return { store, done: async () => (await store.close(), rmSync(dir, { recursive: true, force: true })) };
  });
if (N && POSTGRES_URL)
  suite('PostgreSQL', async () => {
    const store = await openStore(
      { driver: 'postgres', url: await freshPostgresUrl(), pool_size: 4 },
      {},
      builtinExtensions('console', 'routing'),
    );
    return { store, done: () => store.close() };
  });
