import { expect } from 'chai';
import { closeSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { within } from '../helpers/poll';
import { SqliteDb } from '../../src/store/engine/sqlite-db';
import { fileSize } from '../../src/store/stats';

const walBytes = (path: string) => fileSize(`${path}-wal`);

describe('SQLite checkpointer thread', function () {
  this.timeout(30000);
  let dir: string;
  let db: SqliteDb;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gw-ckpt-'));
    db = new SqliteDb(join(dir, 'store.db'));
    await db.exec('CREATE TABLE blobs (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
  });

  after(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs for none of light writes, starts under a second of heavy writes, ends once the store is idle', async () => {
    const path = join(dir, 'store.db');
    await db.write('INSERT INTO blobs (body) VALUES (?)', ['light']);
    await sleep(1200); // a checkpoint tick with a small WAL: checkpointed on the writer
    expect((await db.status()).checkpointer, 'light writes run no checkpointer').to.equal(false);

    // ~8 MB of WAL within a second, in concurrent group commits.
    const body = 'x'.repeat(4000);
    for (let round = 0; round < 4; round++)
      await Promise.all(Array.from({ length: 500 }, () => db.write('INSERT INTO blobs (body) VALUES (?)', [body])));
    expect(walBytes(path), 'the WAL grew past the threshold').to.be.greaterThan(4 * 1024 * 1024);
    expect(await within(3000, async () => (await db.status()).checkpointer), 'a checkpointer thread runs').to.equal(
      true,
    );

    // Idle: the WAL is checkpointed, truncated to zero, and the thread ends.
    expect(
      await within(6000, async () => walBytes(path) === 0 && !(await db.status()).checkpointer),
      'idle: WAL truncated and no checkpointer',
    ).to.equal(true);
    const rows = await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM blobs');
    expect(rows?.n).to.equal(2001);
  });

  it('with the redo log under unbroken load, the WAL still starts again from its beginning (it stays bounded)', async () => {
    const redoDir = mkdtempSync(join(tmpdir(), 'gw-ckpt-redo-'));
    const path = join(redoDir, 'store.db');
    const redo = new SqliteDb(path, { redo: true });
    /** The WAL header's checkpoint sequence number: it counts the times the WAL started again. */
    const restarts = () => {
      const fd = openSync(`${path}-wal`, 'r');
      try {
        const head = Buffer.alloc(16);
        return readSync(fd, head, 0, 16, 0) === 16 ? head.readUInt32BE(12) : 0;
      } finally {
        closeSync(fd);
      }
    };
    try {
      await redo.exec('CREATE TABLE blobs (id INTEGER PRIMARY KEY, body TEXT NOT NULL)');
      const body = 'x'.repeat(4000);
      const first = restarts();
      // Writes in flight all the time for 4 s: a transaction begins right after each commit.
      const until = Date.now() + 4000;
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (Date.now() < until) await redo.write('INSERT INTO blobs (body) VALUES (?)', [body]);
        }),
      );
      expect(restarts() - first, 'the WAL started again at least twice').to.be.at.least(2);
    } finally {
      await redo.close();
      rmSync(redoDir, { recursive: true, force: true });
    }
  });
});
