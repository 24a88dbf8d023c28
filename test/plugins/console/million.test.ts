import { expect } from 'chai';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { Client } from 'pg';
import { openStore, type Store } from '../../../src/store/index';
import { driveAsync, insertRows, type Param } from '../../../src/store/db';
import { GENERATION_COLUMNS, generationParams } from '../../../src/store/generations';
import { outcomeSql } from '../../../plugins/console/store/rollups';
import { spreadRecord } from '../../helpers/usage-records';
import { builtinExtensions } from '../../helpers/store';
import { freshPostgresUrl, POSTGRES_URL } from '../../helpers/postgres';
import { postJson, startTestGateway, testConfig, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY } from '../../helpers/accounts';

/**
 * A store of many generation records (issue 49: 1,000,000), made through the store's bulk path (insertRows, the
 * multi-row INSERT the settlements use), a third of them in the last day: every console API that reads records or
 * their aggregates answers in under 50 ms (the median of five calls, over HTTP), and every number it gives equals a
 * direct count over the records.
 *
 * GATEWAY_TEST_MILLION sets how many records (1000000 for the issue's figure; 0 skips it); by default 100,000, which
 * fills in seconds, so that a console path that reads records again fails the usual run.
 */
const N = Number(process.env.GATEWAY_TEST_MILLION ?? 100_000);
/**
 * 50 ms when GATEWAY_TEST_MILLION is set (the issue's figure, taken on purpose); in the usual run, 50 ms stretched by
 * the load average per core, since a machine busy with other work stretches every wall-clock time alike and the check
 * is there to catch a path that reads records (hundreds of ms at 100,000), not the machine's load.
 */
const boundMs = () =>
  process.env.GATEWAY_TEST_MILLION === undefined ? 50 * Math.max(1, loadavg()[0] / cpus().length) : 50;
const DAY = 86_400_000;
const MODELS = Array.from({ length: 8 }, (_, i) => ({
  id: `vendor/model-${i}`,
  owned_by: 'vendor',
  created: 1715367049,
  context_length: 128000,
  pricing: { prompt: 0.000001, completion: 0.000002 },
  deployments: [
    { provider: 'p', model: 'd0' },
    { provider: 'p', model: 'd1' },
  ],
}));

/**
 * The records, oldest first, through the bulk path; each batch's records end at the time it is made, so that the last
 * ones are minutes old however long the filling took (the overview's 15 minutes hold records).
 */
async function fill(store: Store): Promise<number> {
  const started = performance.now();
  const bulk = {
    name: 'test.bulk-records',
    body: (rows: Param[][]) => insertRows('generations', GENERATION_COLUMNS, rows),
  };
  for (let at = 0; at < N; at += 5000) {
    const rows: Param[][] = [];
    const now = Date.now();
    for (let i = at; i < Math.min(N, at + 5000); i++) rows.push(generationParams(spreadRecord(i, N, now)));
    await store.db.tx((t) => driveAsync(bulk, rows, t));
  }
  return performance.now() - started;
}

/** The columns of a console grouping, over the records themselves. */
const RECORD_DIMENSION: Record<string, string> = {
  date: `CAST(created_at / ${DAY} AS INTEGER)`,
  account: 'account_id',
  key: "COALESCE(key_hash, '')",
  model: 'model',
  provider: "COALESCE(provider, '')",
  deployment: "COALESCE(deployment, '')",
  app: "COALESCE(app_referer, app_title, '')",
};
/** Errors counted directly: upstream errors, timeouts and client errors; a client that left is not one. */
const DIRECT_ERRORS = "SUM(CASE WHEN cancelled = 0 AND (status = 'error' OR error_code IS NOT NULL) THEN 1 ELSE 0 END)";
const DIRECT_SUMS = `COUNT(*) AS requests, SUM(cost) AS cost, SUM(prompt_tokens) AS prompt, ${DIRECT_ERRORS} AS errors`;

interface Counted {
  requests: number;
  cost: number;
  prompt: number;
  errors: number;
}

/** The 30-day records grouped by `dims` (and filtered by `filter`, column = value), keyed by their values joined. */
async function directGroups(
  store: Store,
  now: number,
  dims: string[],
  filter: Record<string, string> = {},
): Promise<Map<string, Counted>> {
  const today = Math.floor(now / DAY);
  const cols = dims.map((d, i) => `${RECORD_DIMENSION[d]} AS g${i}`);
  const where = ['created_at >= ?', ...Object.keys(filter).map((d) => `${RECORD_DIMENSION[d]} = ?`)];
  const rows = await store.db.all<Record<string, unknown>>(
    `SELECT ${[...cols, DIRECT_SUMS].join(', ')} FROM generations WHERE ${where.join(' AND ')}
     ${dims.length ? `GROUP BY ${dims.map((d) => RECORD_DIMENSION[d]).join(', ')}` : ''}`,
    [(today - 29) * DAY, ...Object.values(filter)],
  );
  return new Map(
    rows.map((r) => [
      dims.map((_, i) => String(r[`g${i}`])).join('|'),
      { requests: Number(r.requests), cost: Number(r.cost), prompt: Number(r.prompt), errors: Number(r.errors) },
    ]),
  );
}

/** An activity row's group values, as directGroups keys them. */
function activityGroup(row: Record<string, unknown>, dims: string[]): string {
  const field: Record<string, (r: Record<string, unknown>) => unknown> = {
    date: (r) => Date.parse(`${String(r.date)}T00:00:00Z`) / DAY,
    account: (r) => r.account_id,
    key: (r) => r.api_key_hash ?? '',
    model: (r) => r.model,
    provider: (r) => r.provider_name ?? '',
    deployment: (r) => r.endpoint_id ?? '',
    app: (r) => r.app ?? '',
  };
  return dims.map((d) => String(field[d](row))).join('|');
}

const counted = (r: Record<string, unknown>): Counted => ({
  requests: r.requests as number,
  cost: Math.round((r.usage as number) * 1e9),
  prompt: r.prompt_tokens as number,
  errors: r.errors as number,
});

/**
 * An open store for the suite; `settle` waits until it is at rest after the bulk fill, as a store that took its records
 * one settlement at a time would be.
 */
interface Opened {
  store: Store;
  done: () => Promise<void>;
  settle: () => Promise<void>;
}

function suite(name: string, open: () => Promise<Opened>) {
  describe(`console at ${N.toLocaleString('en-US')} records on ${name}`, function () {
    this.timeout(3_600_000);
    let store: Store;
    let done: () => Promise<void>;
    let settle: () => Promise<void>;
    let gw: TestGateway;
    let cookie = '';
    let now = Date.now();
    /** Each API: its median wall-clock time, and the median CPU time of this process (client, gateway, SQLite). */
    const timings: Array<[string, number, number]> = [];
    /** The APIs over the bound in the test under way: each test fails at its end, once all are timed. */
    let over: string[] = [];
    const inBound = () => {
      const o = over;
      over = [];
      expect(o, 'over the bound').to.deep.equal([]);
    };

    before(async () => {
      ({ store, done, settle } = await open());
      const ms = await fill(store);
      now = Date.now();
      const resting = performance.now();
      await settle();
      process.stdout.write(
        `      (${N.toLocaleString('en-US')} records and their aggregates written in ${(ms / 1000).toFixed(1)} s, ` +
          `${Math.round(N / (ms / 1000))} a second; at rest ${((performance.now() - resting) / 1000).toFixed(1)} s later)\n`,
      );
      gw = await startTestGateway(
        testConfig(
          {
            plugins: ['auth', 'console', 'routing'],
            providers: [
              { name: 'mock', type: 'mock' },
              { name: 'p', type: 'mock' },
            ],
            models: MODELS,
          },
          { GATEWAY_ADMIN_KEY: ADMIN_KEY },
        ),
        { store },
      );
      const res = await postJson(`${gw.url}/console/api/session`, { key: ADMIN_KEY });
      cookie = (res.headers.get('set-cookie') ?? '').split(';')[0];
    });
    after(async () => {
      await gw?.stop();
      await done?.();
      const load = loadavg()
        .map((x) => x.toFixed(1))
        .join(' ');
      process.stdout.write(
        `      median of five, ms wall / CPU of this process (load average ${load}):\n` +
          `${timings.map(([p, ms, cpu]) => `      ${ms.toFixed(1).padStart(7)} ${cpu.toFixed(1).padStart(6)}  ${p}`).join('\n')}\n`,
      );
    });

    /** GET a console API five times (after one warm-up call); its median time must be under 50 ms (boundMs). */
    async function timed(path: string, read: (r: Response) => Promise<unknown> = (r) => r.json(), held = true) {
      const times: number[] = [];
      const cpu: number[] = [];
      let body: unknown;
      const headers: Record<string, string> = path.startsWith('/')
        ? { authorization: `Bearer ${ADMIN_KEY}` }
        : { cookie };
      const url = path.startsWith('/') ? `${gw.url}${path}` : `${gw.url}/console/api/${path}`;
      await fetch(url, { headers }).then(read);
      for (let i = 0; i < 5; i++) {
        const t = performance.now();
        const c = process.cpuUsage();
        const r = await fetch(url, { headers });
        body = await read(r);
        times.push(performance.now() - t);
        const used = process.cpuUsage(c);
        cpu.push((used.user + used.system) / 1000);
        expect(r.status, path).to.equal(200);
      }
      const median = times.sort((a, b) => a - b)[2];
      timings.push([held ? path : `${path} (not held to 50 ms)`, median, cpu.sort((a, b) => a - b)[2]]);
      // Every API of a test is timed before any is failed, so that a run gives every figure.
      if (held && median >= boundMs()) over.push(`${path}: median of five ${median.toFixed(1)} ms`);
      return body as Record<string, unknown>;
    }

    overviewTests(() => ({ store, now, timed, inBound }));
    activityTests(() => ({ store, now, timed, inBound }));
    recordTests(() => ({ store, now, timed, inBound }));

    it('models (today per model and deployment), accounts, keys, audit, me: under 50 ms, exact', async () => {
      const models = (await timed('models')).data as Array<{
        id: string;
        today: { requests: number; errors: number };
        deployments: Array<{ deployment: string; today: { requests: number } }>;
      }>;
      const today = Math.floor(now / DAY);
      const direct = await store.db.all<Record<string, unknown>>(
        `SELECT model, deployment, ${DIRECT_SUMS} FROM generations WHERE created_at >= ? GROUP BY model, deployment`,
        [today * DAY],
      );
      for (const m of models) {
        const mine = direct.filter((r) => r.model === m.id);
        expect(m.today.requests, m.id).to.equal(mine.reduce((a, r) => a + Number(r.requests), 0));
        expect(m.today.errors, m.id).to.equal(mine.reduce((a, r) => a + Number(r.errors), 0));
        for (const d of m.deployments)
          expect(d.today.requests, d.deployment).to.equal(
            Number(mine.find((r) => r.deployment === d.deployment)?.requests ?? 0),
          );
      }
      expect(models.reduce((a, m) => a + m.today.requests, 0)).to.be.above(0);
      await timed('accounts?limit=50');
      await timed('keys?limit=50');
      await timed('keys?limit=200');
      await timed('audit?limit=50');
      await timed('me');
      inBound();
    });
  });
}

interface Ctx {
  store: Store;
  now: number;
  timed: (path: string, read?: (r: Response) => Promise<unknown>, held?: boolean) => Promise<Record<string, unknown>>;
  /** Fails the test if any API it timed was over the bound. */
  inBound: () => void;
}

/** The overview of each window (all, one account, one key): its totals, a bucket and its 30 days, counted directly. */
function overviewTests(ctx: () => Ctx) {
  it('the overview of each window: under 50 ms, its totals, a bucket and the 30 days equal a direct count', async () => {
    const { store, now, timed } = ctx();
    for (const win of ['15m', '1h', '6h', '24h', '7d']) {
      for (const [col, v] of [[], ['account_id', 'acct_m1'], ['key_hash', 'key-m-7']]) {
        const o = await timed(`overview?window=${win}${col ? `&${col}=${v}` : ''}`);
        const series = o.series as Array<{ t: string; requests: number }>;
        const step = (o.bucket_seconds as number) * 1000;
        const count = async (from: number, to: number) => {
          const args: Param[] = col ? [from, to, v] : [from, to];
          const r = await store.db.get<Record<string, unknown>>(
            `SELECT ${DIRECT_SUMS}, SUM(prompt_tokens + completion_tokens) AS tokens,
              SUM(CASE WHEN http_status >= 400 AND http_status < 500 AND cancelled = 0 THEN 1 ELSE 0 END) AS client_errors,
              SUM(CASE WHEN cancelled = 1 THEN 1 ELSE 0 END) AS cancelled,
              SUM(CASE WHEN cancelled = 0 AND error_code = 'upstream_timeout' THEN 1 ELSE 0 END) AS timeouts
             FROM generations WHERE created_at >= ? AND created_at < ?${col ? ` AND ${col} = ?` : ''}`,
            args,
          );
          return Object.fromEntries(Object.entries(r ?? {}).map(([k, x]) => [k, Number(x ?? 0)]));
        };
        const direct = await count(Date.parse(series[0].t), Date.parse(series[series.length - 1].t) + step);
        const t = o.totals as Record<string, number>;
        expect(t.requests, `${win} ${v} requests`).to.equal(direct.requests).and.be.above(0);
        expect(Math.round(t.cost * 1e9), `${win} cost`).to.equal(direct.cost);
        expect([t.tokens, t.errors, t.timeouts, t.client_errors, t.cancelled]).to.deep.equal([
          direct.tokens,
          direct.errors,
          direct.timeouts,
          direct.client_errors,
          direct.cancelled,
        ]);
        const mid = series[Math.floor(series.length / 2)];
        const b = await count(Date.parse(mid.t), Date.parse(mid.t) + step);
        expect(mid.requests, `${win} bucket ${mid.t}`).to.equal(b.requests);
        if (win !== '1h' || col === 'key_hash') continue;
        // The 30 daily totals (the same for every window): each day counted directly.
        const days = await directGroups(store, now, ['date'], col ? { account: v } : {});
        for (const d of o.daily as Array<{ date: string; requests: number; errors: number }>) {
          const c = days.get(String(Date.parse(`${d.date}T00:00:00Z`) / DAY));
          expect([d.requests, d.errors], d.date).to.deep.equal([c?.requests ?? 0, c?.errors ?? 0]);
        }
      }
    }
    ctx().inBound();
  });
}

/** Every grouping and filter the console and /v1/activity offer, its CSV export's first page, and rankings. */
function activityTests(ctx: () => Ctx) {
  const groupings: Array<[string, Record<string, string>, number]> = [
    ['date', {}, 100],
    ['date,model', {}, 1000],
    ['key', {}, 500],
    ['account', {}, 500],
    ['app', {}, 500],
    ['model,deployment', {}, 500],
    ['app,model', {}, 1000],
    ['date,key,model,app', {}, 100],
    ['date,account,key,model,provider,deployment,app', {}, 500],
    ['date,model', { key: 'key-m-7' }, 500],
    ['app', { model: 'vendor/model-3' }, 500],
    ['date', { app: 'https://app3.example' }, 500],
    ['model', { account: 'acct_m2' }, 500],
    ['date,key,model,app', { account: 'acct_m2' }, 100],
  ];
  const param: Record<string, string> = { key: 'api_key_hash', model: 'model', app: 'app', account: 'account_id' };
  it('activity by every grouping and filter: under 50 ms, every row equal to a direct count', async () => {
    const { store, now, timed } = ctx();
    for (const [groupBy, filter, limit] of groupings) {
      const q = Object.entries(filter).map(([d, v]) => `&${param[d]}=${encodeURIComponent(v)}`);
      const body = await timed(`activity?group_by=${groupBy}&limit=${limit}${q.join('')}`);
      const dims = groupBy.split(',');
      const direct = await directGroups(store, now, dims, filter);
      const rows = body.data as Array<Record<string, unknown>>;
      for (const r of rows)
        expect(counted(r), `${groupBy} ${activityGroup(r, dims)}`).to.deep.equal(direct.get(activityGroup(r, dims)));
      expect(rows.length, groupBy).to.equal(Math.min(limit, direct.size));
      expect(body.next_cursor === null, groupBy).to.equal(direct.size <= limit);
    }
    await timed('/v1/activity?group_by=date,model&limit=1000');
    // Grouped by key and model over the range, without the day: no narrower aggregate keeps both, so this reads (and
    // sorts) every usage_daily row of the 30 days; measured and exact, not held to 50 ms (docs/reference/limits.md).
    const byKeyModel = await timed('activity?group_by=key,model&limit=5000', undefined, false);
    const keyModel = await directGroups(store, now, ['key', 'model']);
    const rows = byKeyModel.data as Array<Record<string, unknown>>;
    expect(new Map(rows.map((r) => [activityGroup(r, ['key', 'model']), counted(r)]))).to.deep.equal(keyModel);
    ctx().inBound();
  });

  it('CSV export (its first 1,000 rows) and rankings: under 50 ms, equal to direct counts', async () => {
    const { store, now, timed } = ctx();
    // The head and the first 1,000 rows, newlines counted as they come (this client's CPU is measured too).
    const firstPage = async (r: Response) => {
      const reader = (r.body as ReadableStream<Uint8Array>).getReader();
      const chunks: Buffer[] = [];
      for (let lines = 0; lines < 1001;) {
        const { value, done } = await reader.read();
        if (done) break;
        const chunk = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
        for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) lines++;
        chunks.push(chunk);
      }
      await reader.cancel();
      return { text: Buffer.concat(chunks).toString('utf8') };
    };
    const { text } = (await timed('activity?format=csv', firstPage)) as { text: string };
    const [head, ...lines] = text.split('\n').slice(0, 1001);
    const cols = head.split(',');
    const dims = ['date', 'key', 'model', 'deployment', 'app'];
    const direct = await directGroups(store, now, dims);
    for (const line of lines) {
      const r = Object.fromEntries(line.split(',').map((c, i) => [cols[i], c]));
      const key = [Date.parse(`${r.date}T00:00:00Z`) / DAY, r.api_key_hash, r.model, r.endpoint_id, r.app].join('|');
      expect(Number(r.requests), key).to.equal(direct.get(key)?.requests);
    }
    expect(lines).to.have.length(1000);
    for (const days of [7, 30]) {
      const ranks = (await timed(`rankings?days=${days}`)).data as Array<{
        app: string;
        requests: number;
        tokens: number;
        models: Array<{ model: string; requests: number }>;
      }>;
      const since = (Math.floor(now / DAY) - days + 1) * DAY;
      const apps = await store.db.all<{ app: string; model: string; n: unknown }>(
        'SELECT app_referer AS app, model, COUNT(*) AS n FROM generations WHERE created_at >= ? GROUP BY app_referer, model',
        [since],
      );
      const got = ranks.flatMap((a) => a.models.map((m) => [`${a.app} ${m.model}`, m.requests] as const));
      expect(new Map(got)).to.deep.equal(new Map(apps.map((r) => [`${r.app} ${r.model}`, Number(r.n)])));
    }
    ctx().inBound();
  });
}

/** Records pages with every filter (and the next page), and one record by id: equal to the same query done directly. */
function recordTests(ctx: () => Ctx) {
  it('records pages with every filter, the next page, a record by id: under 50 ms, the rows a direct query gives', async () => {
    const { store, now, timed } = ctx();
    const day10 = new Date((Math.floor(now / DAY) - 10) * DAY).toISOString().slice(0, 10);
    const day9 = new Date((Math.floor(now / DAY) - 9) * DAY).toISOString().slice(0, 10);
    const filters: Array<[string, string[], Param[]]> = [
      ['', [], []],
      ...['error', 'timeout', 'client_error', 'cancelled', 'upstream_error', 'success'].map(
        (o): [string, string[], Param[]] =>
          o === 'error'
            ? [`outcome=${o}`, [`(${outcomeSql()}) IN ('upstream_error', 'timeout', 'client_error')`], []]
            : [`outcome=${o}`, [`(${outcomeSql()}) = ?`], [o]],
      ),
      ...['completed', 'incomplete', 'error'].map((s): [string, string[], Param[]] => [
        `status=${s}`,
        ['status = ?'],
        [s],
      ]),
      ['account_id=acct_m2&model=vendor/model-3', ['account_id = ?', 'model = ?'], ['acct_m2', 'vendor/model-3']],
      ['key_hash=key-m-7', ['key_hash = ?'], ['key-m-7']],
      ['key_hash=key-m-2&status=error', ['key_hash = ?', 'status = ?'], ['key-m-2', 'error']],
      // None at all (this key's records are never errors): every record of the key is looked at, in the indexes.
      ['key_hash=key-m-7&status=error', ['key_hash = ?', 'status = ?'], ['key-m-7', 'error']],
      [
        'key_hash=key-m-7&outcome=error',
        ['key_hash = ?', `(${outcomeSql()}) IN ('upstream_error', 'timeout', 'client_error')`],
        ['key-m-7'],
      ],
      ['model=vendor/model-5&outcome=timeout', ['model = ?', `(${outcomeSql()}) = ?`], ['vendor/model-5', 'timeout']],
      [`from=${day10}&to=${day9}`, ['created_at >= ?', 'created_at < ?'], [Date.parse(day10), Date.parse(day9)]],
      [
        `key_hash=key-m-7&from=${day10}&to=${day9}`,
        ['key_hash = ?', 'created_at >= ?', 'created_at < ?'],
        ['key-m-7', Date.parse(day10), Date.parse(day9)],
      ],
    ];
    for (const [q, where, params] of filters) {
      const direct = async (offset: number) =>
        (
          await store.db.all<{ id: string }>(
            `SELECT id FROM generations ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
             ORDER BY created_at DESC, id DESC LIMIT 50 OFFSET ${offset}`,
            params,
          )
        ).map((r) => r.id);
      const page = await timed(`records?limit=50${q ? `&${q}` : ''}`);
      const ids = (page.data as Array<{ id: string }>).map((r) => r.id);
      expect(ids, q).to.deep.equal(await direct(0));
      if (!q) expect(ids).to.have.length(50);
      if (page.next_cursor === null) {
        expect(await direct(50), `${q} page 2`).to.deep.equal([]);
        continue;
      }
      const next = await timed(`records?limit=50${q ? `&${q}` : ''}&cursor=${page.next_cursor as string}`);
      expect(
        (next.data as Array<{ id: string }>).map((r) => r.id),
        `${q} page 2`,
      ).to.deep.equal(await direct(50));
    }
    const one = (await timed('records/gen-m-12345')).data as Record<string, unknown>;
    const row = await store.db.get<Record<string, unknown>>(
      'SELECT cost, prompt_tokens FROM generations WHERE id = ?',
      ['gen-m-12345'],
    );
    expect([Math.round((one.total_cost as number) * 1e9), one.tokens_prompt]).to.deep.equal([
      Number(row?.cost),
      Number(row?.prompt_tokens),
    ]);
    ctx().inBound();
  });
}

if (!N) describe('console at many records', () => it.skip('GATEWAY_TEST_MILLION=0 skips it'));
else
  suite('SQLite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-million-'));
    const store = await openStore(
      { driver: 'sqlite', path: join(dir, 'g.db') },
      { redo: true },
      builtinExtensions('console', 'routing'),
    );
    return {
      store,
      done: async () => (await store.close(), rmSync(dir, { recursive: true, force: true })),
      // The engine checkpoints the WAL once writes stop and truncates it after a quiet second: a million records' WAL
      // being copied into the database file is not the console's cost.
      settle: async () => {
        const wal = join(dir, 'g.db-wal');
        for (let i = 0; i < 600 && existsSync(wal) && statSync(wal).size > 0; i++) await sleep(200);
      },
    };
  });
if (N && POSTGRES_URL)
  suite('PostgreSQL', async () => {
    const url = await freshPostgresUrl();
    const store = await openStore(
      { driver: 'postgres', url, pool_size: 4 },
      {},
      builtinExtensions('console', 'routing'),
    );
    return {
      store,
      // A store that took its records one settlement at a time has been vacuumed and analysed as it grew (autovacuum);
      // one just filled in bulk has no statistics (PostgreSQL would plan a records page as if the table were empty),
      // and its aggregates' million superseded row versions, each upsert's, are still there to be stepped over.
      settle: async () => {
        for (const t of [
          'generations',
          'usage_daily',
          'usage_daily_accounts',
          'usage_daily_keys',
          'usage_daily_models',
        ])
          await store.db.run(`VACUUM ANALYZE ${t}`);
        for (const t of ['usage_daily_apps', 'usage_minute', 'usage_minute_accounts', 'usage_hour_accounts'])
          await store.db.run(`VACUUM ANALYZE ${t}`);
      },
      done: async () => {
        await store.close();
        // A million records are not left behind in the test database.
        const c = new Client({ connectionString: POSTGRES_URL });
        await c.connect();
        await c.query(`DROP SCHEMA ${/search_path=(\w+)/.exec(decodeURIComponent(url))?.[1]} CASCADE`);
        await c.end();
      },
    };
  });
