import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store } from '../../../src/store/index';
import { driveAsync, insertRows, type Param } from '../../../src/store/db';
import { GENERATION_COLUMNS, generationParams } from '../../../src/store/generations';
import { listRecords, type RecordFilter } from '../../../plugins/console/records';
import { outcomeSql } from '../../../plugins/console/store/rollups';
import { spreadRecord } from '../../helpers/usage-records';
import { builtinExtensions } from '../../helpers/store';
import { freshPostgresUrl, POSTGRES_URL } from '../../helpers/postgres';

const N = 3000;
const NOW = Date.UTC(2026, 10, 20, 12);

/** spreadRecord's keys, models and outcomes, on 40 instants only: every page boundary falls among equal times. */
async function fill(store: Store): Promise<void> {
  const rows: Param[][] = [];
  for (let i = 0; i < N; i++)
    rows.push(generationParams({ ...spreadRecord(i, N, NOW), createdAt: NOW - (i % 40) * 60_000 }));
  const bulk = { name: 'test.records', body: (r: Param[][]) => insertRows('generations', GENERATION_COLUMNS, r) };
  await store.db.tx((t) => driveAsync(bulk, rows, t));
}

const FILTERS: Array<[RecordFilter, string[], Param[]]> = [
  [{ keyHash: 'key-m-2', status: 'error' }, ['key_hash = ?', "status = 'error'"], ['key-m-2']],
  // None: this key's records are never errors.
  [{ keyHash: 'key-m-7', status: 'error' }, ['key_hash = ?', "status = 'error'"], ['key-m-7']],
  [{ keyHash: 'key-m-2', status: 'completed' }, ['key_hash = ?', "status = 'completed'"], ['key-m-2']],
  [{ accountId: 'acct_m1', model: 'vendor/model-3' }, ['account_id = ?', 'model = ?'], ['acct_m1', 'vendor/model-3']],
  [
    { model: 'vendor/model-5', outcome: 'error' },
    ['model = ?', `(${outcomeSql()}) IN ('upstream_error', 'timeout', 'client_error')`],
    ['vendor/model-5'],
  ],
  [
    { accountId: 'acct_m0', keyHash: 'key-m-3', outcome: 'success', status: 'completed' },
    ['account_id = ?', 'key_hash = ?', `(${outcomeSql()}) = 'success'`, "status = 'completed'"],
    ['acct_m0', 'key-m-3'],
  ],
  [
    { keyHash: 'key-m-2', status: 'completed', from: NOW - 30 * 60_000, to: NOW - 10 * 60_000 },
    ['key_hash = ?', "status = 'completed'", 'created_at >= ?', 'created_at < ?'],
    ['key-m-2', NOW - 30 * 60_000, NOW - 10 * 60_000],
  ],
];

function suite(name: string, open: () => Promise<{ store: Store; done: () => Promise<void> }>) {
  describe(`console records list on ${name}: two filters or more`, function () {
    this.timeout(120_000);
    let store: Store;
    let done: () => Promise<void>;
    before(async () => {
      ({ store, done } = await open());
      await fill(store);
    });
    after(async () => done?.());

    it('every page, cursor after cursor, is the direct query newest first (ties by id), nothing skipped or repeated', async () => {
      for (const [f, where, params] of FILTERS) {
        const direct = await store.db.all<{ id: string }>(
          `SELECT id FROM generations WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC`,
          params,
        );
        const ids: string[] = [];
        let cursor: string | undefined;
        for (let pages = 0; pages < 1000; pages++) {
          const page = await listRecords(store.db, f, 7, cursor);
          ids.push(...page.rows.map((r) => String(r.id)));
          if (!page.next) break;
          cursor = page.next;
        }
        expect(ids, JSON.stringify(f)).to.deep.equal(direct.map((r) => r.id));
        if (f.keyHash !== 'key-m-7') expect(ids.length, JSON.stringify(f)).to.be.above(7);
      }
    });
  });
}

suite('SQLite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'gw-records-'));
  const store = await openStore({ driver: 'sqlite', path: join(dir, 'g.db') }, {}, builtinExtensions('console'));
  return { store, done: async () => (await store.close(), rmSync(dir, { recursive: true, force: true })) };
});
if (POSTGRES_URL)
  suite('PostgreSQL', async () => {
    const store = await openStore(
      { driver: 'postgres', url: await freshPostgresUrl(), pool_size: 2 },
      {},
      builtinExtensions('console'),
    );
    return { store, done: () => store.close() };
  });
