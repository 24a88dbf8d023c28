import { expect } from 'chai';
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteDb } from '../../src/store/engine/sqlite-db';

/**
 * The writes of one turn reach the SQLite engine as one batch and run in one savepoint; when one fails, the batch
 * runs again item by item. Whatever the mix, each write must succeed or fail as it would alone.
 */
describe('SQLite group commit: the writes of one batch fail alone', function () {
  this.timeout(60000);
  let dir: string;

  before(() => (dir = mkdtempSync(join(tmpdir(), 'gw-group-'))));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('inserts with duplicate keys in one batch: the first of each key lands, the rest are refused, also after a reopen', async () => {
    const path = join(dir, 'group.db');
    let db = new SqliteDb(path, { redo: true });
    await db.exec('CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)');
    let round = 0;
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 12 }), { minLength: 1, maxLength: 40 }), async (keys) => {
          round++;
          await db.write('DELETE FROM t', []);
          // Sent in one turn: one message, one batch.
          const out = await Promise.allSettled(
            keys.map((k, i) => db.write('INSERT INTO t (k, v) VALUES (?, ?)', [k, `${round}:${i}`])),
          );
          const first = new Map<number, number>();
          keys.forEach((k, i) => first.has(k) || first.set(k, i));
          expect(out.map((o) => o.status)).to.deep.equal(
            keys.map((k, i) => (first.get(k) === i ? 'fulfilled' : 'rejected')),
          );
          const want = [...first].map(([k, i]) => ({ k, v: `${round}:${i}` })).sort((a, b) => a.k - b.k);
          expect(await db.all('SELECT k, v FROM t ORDER BY k')).to.deep.equal(want);
          if (round % 10 === 0) {
            // The redo log and the commit hold the same: a reopened store sees exactly what was acknowledged.
            await db.close();
            db = new SqliteDb(path, { redo: true });
            expect(await db.all('SELECT k, v FROM t ORDER BY k')).to.deep.equal(want);
          }
        }),
        { numRuns: 40 },
      );
    } finally {
      await db.close();
    }
  });
});
