import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store } from '../../../src/store/index';
import { driveAsync, insertRows, type Param } from '../../../src/store/db';
import { GENERATION_COLUMNS, generationParams } from '../../../src/store/generations';
import { generationRecord } from '../../helpers/generation';
import { builtinExtensions, creditOf, expectAllCharged, runKilledFixture } from '../../helpers/store';

const AGGREGATES = [
  'usage_minute',
  'usage_minute_accounts',
  'usage_hour_accounts',
  'usage_daily',
  'usage_daily_accounts',
  'usage_daily_keys',
  'usage_daily_models',
  'usage_daily_apps',
];

/** Every aggregate's totals equal the records' and nothing is left staged: the fold ran before each commit. */
async function expectFolded(store: Store, label: string): Promise<void> {
  const want = await store.db.get<{ n: number; cost: number; tokens: number }>(
    'SELECT COUNT(*) AS n, SUM(cost) AS cost, SUM(prompt_tokens + completion_tokens) AS tokens FROM generations',
  );
  const staged = await store.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM usage_pending');
  expect(Number(staged?.n), `${label}: rows left staged`).to.equal(0);
  for (const table of AGGREGATES) {
    const got = await store.db.get<{ n: number; cost: number; tokens: number }>(
      `SELECT SUM(requests) AS n, SUM(cost) AS cost, SUM(prompt_tokens + completion_tokens) AS tokens FROM ${table}`,
    );
    expect(
      { n: Number(got?.n), cost: Number(got?.cost), tokens: Number(got?.tokens) },
      `${label}: ${table}`,
    ).to.deep.equal({ n: Number(want?.n), cost: Number(want?.cost), tokens: Number(want?.tokens) });
  }
}

const bulk = {
  name: 'test.bulk-records',
  body: (rows: Param[][]) => insertRows('generations', GENERATION_COLUMNS, rows),
};

describe('console aggregates on SQLite: records staged by the trigger, folded before every commit', function () {
  this.timeout(60000);
  let dir: string;
  let path: string;
  const open = (opts = {}) =>
    openStore({ driver: 'sqlite', path }, opts, builtinExtensions('credit', 'storage', 'console'));

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gw-fold-'));
    path = join(dir, 'store.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('settlements in group commits, a transaction driven from the main thread, a statement outside any', async () => {
    const store = await open({ redo: true });
    try {
      const accountId = (await store.accounts.create({ name: 'a', credits: 1_000_000 })).id;
      const settled = Array.from({ length: 30 }, async (_, i) => {
        const r = await creditOf(store).reserve(accountId, null, 1_000);
        if (!r.ok) throw new Error('refused');
        const model = i % 3 === 0 ? 'other' : 'm';
        return creditOf(store).settle(
          r.id,
          100 + i,
          generationRecord({ id: `s-${i}`, accountId, cost: 100 + i, model }),
        );
      });
      expect(await Promise.all(settled)).to.not.include(false);
      await expectFolded(store, 'group commits');

      const rows = Array.from({ length: 70 }, (_, i) =>
        generationParams(generationRecord({ id: `t-${i}`, accountId, cost: 7, createdAt: Date.now() - i * 90_000 })),
      );
      await store.db.tx((t) => driveAsync(bulk, rows, t));
      await expectFolded(store, 'driven transaction');

      const params = generationParams(generationRecord({ id: 'x-1', accountId, cost: 11 }));
      const columns = GENERATION_COLUMNS.join(', ');
      const values = params.map((p) => (p === null ? 'NULL' : typeof p === 'string' ? `'${p}'` : String(p)));
      await store.db.exec(`INSERT INTO generations (${columns}) VALUES (${values.join(', ')})`);
      await expectFolded(store, 'a statement outside any transaction');
    } finally {
      await store.close();
    }
  });

  it('a transaction rolled back leaves nothing staged and nothing counted', async () => {
    const store = await open();
    try {
      const accountId = (await store.accounts.create({ name: 'a', credits: 10 })).id;
      const rows = [generationParams(generationRecord({ id: 'r-1', accountId, cost: 5 }))];
      const failing = store.db.tx(async (t) => {
        await driveAsync(bulk, rows, t);
        throw new Error('no');
      });
      await failing.then(
        () => expect.fail('the transaction did not fail'),
        (e: Error) => expect(e.message).to.equal('no'),
      );
      await expectFolded(store, 'after the rollback');
      expect(Number((await store.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM generations'))?.n)).to.equal(0);
    } finally {
      await store.close();
    }
  });

  it('a SIGKILL before the commit: the replay stages the records again and folds them before its commit', async () => {
    const setup = await open();
    const accountId = (await setup.accounts.create({ name: 'a', credits: 1_000_000 })).id;
    await setup.close();
    const acked = runKilledFixture<{ charged: number; logBytes: number }>('redo-crash', [
      path,
      accountId,
      '40',
      'console',
    ]);
    expect(acked.logBytes, 'acknowledged in the log, not committed').to.be.greaterThan(0);
    const store = await open({ redo: true });
    try {
      await expectAllCharged(store, accountId, { ...acked, count: 40, prefix: 'redo-' });
      await expectFolded(store, 'after the replay');
    } finally {
      await store.close();
    }
  });
});
