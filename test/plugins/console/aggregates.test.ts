import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { StoreConfig } from '../../../src/config/types';
import type { Generation } from '../../../src/store/generations';
import { openStore, type Store } from '../../../src/store/index';
import { consoleMigrations } from '../../../plugins/console/store/migrations';
import {
  DIMENSION_FIELD,
  UsageRepo,
  cursorOf,
  dayOf,
  parseCursor,
  type Dimension,
  type UsageQuery,
} from '../../../plugins/console/usage';
import { builtinExtensions } from '../../helpers/store';
import { POSTGRES_URL, freshPostgresUrl } from '../../helpers/postgres';
import { insertRecords, makeRecords } from '../../helpers/usage-records';

/**
 * console@4 (issue 49): the daily aggregates per key, per model and deployment, per app and model, kept by the same
 * trigger, read by whichever grouping they keep; a grouping with the day read in windows of days. Every grouping and
 * filter, page by page, equals a naive sum over the records; the migration fills them from usage_daily.
 */
const NOW = Date.UTC(2026, 5, 15, 12);

type Filter = Pick<UsageQuery, 'accountId' | 'keyHash' | 'model' | 'app'>;

const VALUE: Record<Dimension, (g: Generation) => string | number> = {
  date: (g) => dayOf(g.createdAt),
  account: (g) => g.accountId,
  key: (g) => g.keyHash ?? '',
  model: (g) => g.model,
  provider: (g) => g.provider ?? '',
  deployment: (g) => g.deployment ?? '',
  app: (g) => g.appReferer ?? g.appTitle ?? '',
};

type Sums = [requests: number, cost: number, prompt: number, errors: number];

function naive(rows: Generation[], groupBy: Dimension[], f: Filter, fromDay: number): Map<string, Sums> {
  const m = new Map<string, Sums>();
  for (const g of rows) {
    if (dayOf(g.createdAt) < fromDay) continue;
    if (f.accountId !== undefined && g.accountId !== f.accountId) continue;
    if (f.keyHash !== undefined && (g.keyHash ?? '') !== f.keyHash) continue;
    if (f.model !== undefined && g.model !== f.model) continue;
    if (f.app !== undefined && VALUE.app(g) !== f.app) continue;
    const k = groupBy.map((d) => VALUE[d](g)).join('|');
    const e = m.get(k) ?? [0, 0, 0, 0];
    m.set(k, [e[0] + 1, e[1] + g.cost, e[2] + g.promptTokens, e[3] + (g.status === 'error' ? 1 : 0)]);
  }
  return m;
}

/** Every page of a query (`limit` rows each, through the cursors the API gives out), as a map like naive's. */
async function allPages(usage: UsageRepo, q: UsageQuery): Promise<Map<string, Sums>> {
  const got = new Map<string, Sums>();
  let after: Array<string | number> | undefined;
  for (let pages = 0; pages < 10_000; pages++) {
    const rows = await usage.query({ ...q, after });
    for (const r of rows) {
      const k = q.groupBy.map((d) => r[DIMENSION_FIELD[d]]).join('|');
      expect(got.has(k), `${q.groupBy.join(',')}: ${k} on two pages`).to.equal(false);
      got.set(k, [r.requests, r.cost, r.promptTokens, r.errors]);
    }
    if (rows.length < q.limit) return got;
    after = parseCursor(cursorOf(rows[rows.length - 1], q.groupBy));
  }
  throw new Error('no last page');
}

const GROUPINGS: Array<[Dimension[], Filter]> = [
  [['date'], {}],
  [['date', 'model'], {}],
  [['key'], {}],
  [['account'], {}],
  [['app'], {}],
  [['provider'], {}],
  [['model', 'deployment'], {}],
  [['app', 'model'], {}],
  [['key', 'model'], {}],
  [['date', 'key', 'model', 'app'], {}],
  [['date', 'account', 'key', 'model', 'provider', 'deployment', 'app'], {}],
  [['date', 'account', 'key'], {}],
  [['model', 'date'], { accountId: 'acct_1' }],
  [['date', 'key', 'model', 'app'], { accountId: 'acct_2' }],
  [['date', 'model'], { keyHash: 'k1' }],
  [['app'], { model: 'm/1' }],
  [['date'], { app: 'https://app1.example' }],
  [[], {}],
  [[], { keyHash: 'k2' }],
];

function contract(name: string, open: () => Promise<Store>) {
  describe(`narrower daily aggregates on ${name}`, function () {
    this.timeout(120_000);
    let store: Store;
    const records = [...makeRecords(2500, NOW - 60_000, 20, 41), ...makeRecords(400, NOW, 0.01, 42)];
    before(async () => {
      store = await open();
      await insertRecords(store, records);
    });
    after(async () => store?.close());

    it('every grouping and filter, page by page through the cursors, equals a naive sum over the records', async () => {
      const usage = new UsageRepo(store.db);
      const fromDay = dayOf(NOW) - 29;
      for (const [groupBy, filter] of GROUPINGS) {
        const expected = naive(records, groupBy, filter, fromDay);
        for (const limit of [13, 5000]) {
          const got = await allPages(usage, { fromDay, toDay: dayOf(NOW), groupBy, limit, ...filter });
          expect(got, `${groupBy.join(',')} ${JSON.stringify(filter)} by ${limit}`).to.deep.equal(expected);
        }
      }
    });

    it('a page of days starts at the day of its cursor and reads no day twice across its windows', async () => {
      const usage = new UsageRepo(store.db);
      const q: UsageQuery = { fromDay: dayOf(NOW) - 29, toDay: dayOf(NOW), groupBy: ['date', 'model'], limit: 4 };
      const first = await usage.query(q);
      expect(first.map((r) => r.day)).to.deep.equal([...first.map((r) => r.day)].sort((a, b) => Number(b) - Number(a)));
      const second = await usage.query({ ...q, after: parseCursor(cursorOf(first[3], q.groupBy)) });
      expect(second[0].day).to.be.at.most(first[3].day as number);
      const all = await usage.query({ ...q, limit: 8 });
      expect([...first, ...second]).to.deep.equal(all);
    });
  });
}

contract('SQLite', () => openStore({ driver: 'memory' }, {}, builtinExtensions('console')));
if (POSTGRES_URL)
  contract('PostgreSQL', async () =>
    openStore({ driver: 'postgres', url: await freshPostgresUrl(), pool_size: 4 }, {}, builtinExtensions('console')),
  );

/**
 * console@4 on a store that console@1-3 made: the narrower aggregates are filled from usage_daily, a day whose
 * records retention deleted included, and the trigger keeps them from then on.
 */
function backfill(name: string, location: () => Promise<StoreConfig>) {
  it(`console@4 fills the narrower aggregates from usage_daily, then keeps them (${name})`, async function () {
    this.timeout(60_000);
    const config = await location();
    const older = { migrations: consoleMigrations.filter((m) => m.version < 4), procedures: [] };
    const before = makeRecords(1200, NOW, 10, 51);
    const old = await openStore(config, {}, older);
    await insertRecords(old, before);
    const gone = dayOf(NOW) - 100;
    const goneRow: Record<Dimension, string | number> = {
      date: gone,
      account: 'acct_gone',
      key: 'k_gone',
      model: 'm/gone',
      provider: 'p',
      deployment: 'p/d',
      app: 'https://gone.example',
    };
    await old.db.run(
      'INSERT INTO usage_daily (day, account_id, key_hash, model, provider, deployment, app, requests, cost) ' +
        "VALUES (?, 'acct_gone', 'k_gone', 'm/gone', 'p', 'p/d', 'https://gone.example', 7, 70)",
      [gone],
    );
    await old.close();
    const store = await openStore(config, {}, builtinExtensions('console'));
    try {
      const usage = new UsageRepo(store.db);
      const later = makeRecords(300, NOW, 10, 52);
      for (const step of ['migrated', 'written after'] as const) {
        const records = step === 'migrated' ? before : [...before, ...later];
        for (const groupBy of [
          ['key'],
          ['model', 'deployment'],
          ['app', 'model'],
          ['date', 'model'],
        ] as Dimension[][]) {
          const got = await allPages(usage, { fromDay: gone, toDay: dayOf(NOW), groupBy, limit: 5000 });
          const expected = naive(records, groupBy, {}, gone);
          expected.set(groupBy.map((d) => goneRow[d]).join('|'), [7, 70, 0, 0]);
          expect(got, `${step}: ${groupBy.join(',')}`).to.deep.equal(expected);
        }
        if (step === 'migrated') await insertRecords(store, later);
      }
    } finally {
      await store.close();
    }
  });
}

describe('narrower aggregates of an older store', () => {
  backfill('SQLite', async () => ({
    driver: 'sqlite',
    path: join(mkdtempSync(join(tmpdir(), 'gw-narrow-')), 'g.db'),
  }));
  if (POSTGRES_URL)
    backfill('PostgreSQL', async () => ({ driver: 'postgres', url: await freshPostgresUrl(), pool_size: 2 }));
});
