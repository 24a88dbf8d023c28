/**
 * Usage analytics benchmark: 100,000 generation records over 30 days (their aggregates kept by the store's trigger
 * as they are inserted), then the console's 30-day daily query, timed on SQLite (a file, WAL) and
 * PostgreSQL (GATEWAY_TEST_POSTGRES_URL or --postgres URL). Goal: under 50 ms.
 *   npm run bench:analytics -- [--records N] [--postgres URL]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { openStore, type Store } from '../src/store/index';
import { storeExtensionsOf } from '../src/store/extensions';
import consolePlugin from '../plugins/console';
import { GENERATION_INSERT, generationParams, type Generation } from '../src/store/generations';
import { UsageRepo, DAY_MS, dayOf, type Dimension } from '../plugins/console/usage';
import { listRecords } from '../plugins/console/records';

/** The console's tables and roll-up procedure, as a chain with the console plugin opens the store. */
const consoleStore = storeExtensionsOf([{ plugin: consolePlugin, index: 0 }]);

const { values } = parseArgs({
  options: { records: { type: 'string', default: '100000' }, postgres: { type: 'string' } },
});
const N = Number(values.records);
const PG = values.postgres ?? process.env.GATEWAY_TEST_POSTGRES_URL;

function records(n: number, now: number): Generation[] {
  let s = 42;
  const rnd = (k: number) => ((s = (s * 1103515245 + 12345) % 2147483648), Math.floor((s / 2147483648) * k));
  return Array.from({ length: n }, (_, i) => ({
    id: `chatcmpl-bench-${i}`,
    accountId: `acct_${rnd(3)}`,
    keyHash: `key_${rnd(50)}`,
    model: `vendor/model-${rnd(8)}`,
    provider: 'p',
    deployment: `p/d${rnd(2)}`,
    promptTokens: rnd(2000),
    completionTokens: rnd(800),
    cachedTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    cost: rnd(100_000),
    latencyMs: rnd(3000),
    ttftMs: null,
    finishReason: 'stop',
    streamed: false,
    cancelled: false,
    status: rnd(50) === 0 ? 'error' : 'completed',
    errorCode: null,
    appReferer: `https://app${rnd(10)}.example`,
    appTitle: null,
    user: null,
    metadata: null,
    createdAt: now - 60_000 - rnd(30 * DAY_MS),
  }));
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function time(fn: () => Promise<unknown>, runs = 21): Promise<{ median: number; max: number }> {
  await fn(); // warm
  const t: number[] = [];
  for (let i = 0; i < runs; i++) {
    const s = performance.now();
    await fn();
    t.push(performance.now() - s);
  }
  return { median: median(t), max: Math.max(...t) };
}

async function run(name: string, store: Store): Promise<void> {
  const now = Date.now();
  const rows = records(N, now);
  const t = performance.now();
  for (let i = 0; i < rows.length; i += 1000) {
    await store.db.tx(async (tx) => {
      for (const g of rows.slice(i, i + 1000)) await tx.run(GENERATION_INSERT, generationParams(g));
    });
  }
  const insertMs = performance.now() - t;
  const usage = new UsageRepo(store.db);
  const aggregates = Number((await store.db.get<{ n: unknown }>('SELECT COUNT(*) AS n FROM usage_daily'))?.n);
  const today = dayOf(now);
  const q = (groupBy: Dimension[], limit: number, accountId?: string) => () =>
    usage.query({ fromDay: today - 29, toDay: today, groupBy, limit, accountId });
  const daily = await time(q(['date'], 31));
  const perModel = await time(q(['date', 'model'], 1000));
  const perKey = await time(q(['date', 'key', 'model', 'app'], 500, 'acct_1'));
  const naive = await time(
    () =>
      store.db.all(
        `SELECT CAST(created_at / ${DAY_MS} AS INTEGER) AS day, COUNT(*), SUM(cost) FROM generations WHERE created_at >= ? GROUP BY 1`,
        [(today - 29) * DAY_MS],
      ),
    5,
  );
  const page = await time(() => listRecords(store.db, { accountId: 'acct_1', model: 'vendor/model-3' }, 50));
  const out = (label: string, r: { median: number; max: number }) =>
    `  ${label.padEnd(52)} median ${r.median.toFixed(2).padStart(7)} ms   max ${r.max.toFixed(2).padStart(7)} ms`;
  process.stdout.write(
    [
      `${name}: ${N.toLocaleString('en-US')} records over 30 days (inserted with their aggregates in ${(insertMs / 1000).toFixed(1)} s) -> ${aggregates} daily aggregate rows`,
      out('30-day daily totals (group_by=date)', daily),
      out('30-day per day and model', perModel),
      out('30-day per day, key, model, app, one account (page 500)', perKey),
      out('one activity page (account + model filter, 50 rows)', page),
      out('for comparison: the same daily totals from raw records', naive),
      `  goal: 30-day daily query < 50 ms: ${daily.median < 50 ? 'met' : 'NOT met'}`,
      '',
    ].join('\n'),
  );
}

async function main(): Promise<void> {
  process.stdout.write(`usage analytics benchmark (node ${process.version})\n\n`);
  const dir = mkdtempSync(join(tmpdir(), 'gw-analytics-'));
  const sqlite = await openStore({ driver: 'sqlite', path: join(dir, 'bench.db') }, {}, consoleStore);
  try {
    await run('SQLite (file, WAL)', sqlite);
  } finally {
    await sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }
  if (!PG) {
    process.stdout.write('PostgreSQL: skipped (set GATEWAY_TEST_POSTGRES_URL or --postgres URL)\n');
    return;
  }
  const schema = `gw_bench_${Date.now().toString(36)}`;
  const admin = new Client({ connectionString: PG });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const u = new URL(PG);
  u.searchParams.set('options', `-c search_path=${schema}`);
  const pg = await openStore({ driver: 'postgres', url: u.toString(), pool_size: 4 }, {}, consoleStore);
  try {
    await run('PostgreSQL', pg);
  } finally {
    await pg.close();
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
}

void main();
