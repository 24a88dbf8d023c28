import { expect } from 'chai';
import fs, { rmSync, statSync } from 'node:fs';
import {} from '../../src/store/index';
import type { SqliteDb } from '../../src/store/engine/sqlite-db';
import { AheadLog, EMPTY_ABOVE, MAX_UNANSWERED } from '../../src/store/engine/ahead-log';
import { within } from '../helpers/poll';
import { readRecords } from '../../src/store/engine/redo-log';
import { generationRecord } from '../helpers/generation';
import {
  countRows as count,
  expectAllCharged,
  runKilledFixture,
  storeWithAccount,
  creditOf,
  openChainStore,
} from '../helpers/store';

describe("SQLite ahead log: a request's settlement done once the main thread logged it", function () {
  this.timeout(60000);
  let dir: string;
  let path: string;
  let accountId: string;

  beforeEach(async () => ({ dir, path, accountId } = await storeWithAccount('gw-ahead-')));

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a SIGKILL before the worker ran them loses none, and each is charged once (twice reopened)', async () => {
    const acked = runKilledFixture<{ charged: number; bytes: number }>('ahead-crash', [path, accountId, '30']);
    expect(acked.bytes, 'what was acknowledged was in the ahead log').to.be.greaterThan(0);
    for (let round = 0; round < 2; round++) {
      const store = await openChainStore({ driver: 'sqlite', path }, { redo: true });
      try {
        expect(statSync(`${path}-ahead-0`).size + statSync(`${path}-ahead-1`).size, 'emptied once run').to.equal(0);
        await expectAllCharged(store, accountId, { ...acked, count: 30, prefix: 'k' }, `round ${round}: `);
        // The next settlements number on from the last one run, and are not taken for it.
        const r = await creditOf(store).reserve(accountId, null, 1_000);
        expect(r.ok).to.equal(true);
        if (r.ok) await creditOf(store).settleLogged(r.id, 7, null, null, [], () => undefined);
        await store.db.get('SELECT 1'); // a read sees what was acknowledged
        expect((await store.accounts.get(accountId))?.usage).to.equal(acked.charged + 7);
        acked.charged += 7;
      } finally {
        await store.close();
      }
    }
  });

  it('settlements the worker ran and answered but has not committed are in no redo log, and a SIGKILL loses none', async () => {
    const acked = runKilledFixture<{ charged: number; bytes: number; redo: number }>('ahead-crash', [
      path,
      accountId,
      '30',
      'ran',
    ]);
    // All answered, past the size at which an answered file was emptied: kept, for nothing else holds them.
    expect(acked.bytes, 'the ahead log kept them').to.be.greaterThan(512 * 1024);
    expect(acked.redo, 'the redo log holds none of them').to.equal(0);
    const store = await openChainStore({ driver: 'sqlite', path }, { redo: true });
    try {
      await expectAllCharged(store, accountId, { ...acked, count: 30, prefix: 'k' });
    } finally {
      await store.close();
    }
  });

  it('a write after settlements run from the ahead log alone replays after them, as it ran', async () => {
    const acked = runKilledFixture<{ charged: number }>('ahead-crash', [path, accountId, '3', 'mixed']);
    const store = await openChainStore({ driver: 'sqlite', path }, { redo: true });
    try {
      expect((await store.accounts.get(accountId))?.usage).to.equal(acked.charged);
      // Replayed before the settlement that made it, the delete would find nothing, and the record would stay.
      expect(await count(store, 'SELECT COUNT(*) AS n FROM generations')).to.equal(2);
      expect(await count(store, 'SELECT COUNT(*) AS n FROM generations WHERE id = ?', ['gen-0'])).to.equal(0);
    } finally {
      await store.close();
    }
  });

  it('a read right after a settlement was acknowledged sees it; a worker that dies gets what it had not run again', async () => {
    const store = await openChainStore({ driver: 'sqlite', path }, { redo: true });
    try {
      const db = store.db as SqliteDb;
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) {
        const r = await creditOf(store).reserve(accountId, null, 1_000);
        if (r.ok) ids.push(r.id);
      }
      // Acknowledged, then read at once: the read crosses after it and must see it.
      await creditOf(store).settleLogged(ids[0], 10, generationRecord({ id: 'gen-a', accountId }), null, [], () => {});
      expect(await count(store, 'SELECT COUNT(*) AS n FROM generations WHERE id = ?', ['gen-a'])).to.equal(1);
      // Ten more acknowledged; the worker thread is terminated before it answers them.
      const worker = (db as unknown as { link: { worker: { terminate(): Promise<number> } | null } }).link.worker!;
      let refused = 0;
      const acks = ids
        .slice(1, 11)
        .map((id, i) =>
          creditOf(store).settleLogged(
            id,
            20,
            generationRecord({ id: `gen-b${i}`, accountId }),
            null,
            [],
            () => refused++,
          ),
        );
      await Promise.all(acks);
      await worker.terminate();
      await new Promise((r) => setTimeout(r, 200));
      expect(await count(store, "SELECT COUNT(*) AS n FROM generations WHERE id LIKE 'gen-b%'")).to.equal(10);
      expect(await store.ledger.sum(accountId)).to.equal(10 + 10 * 20);
      expect(refused).to.equal(0);
    } finally {
      await store.close();
    }
  });

  it('holds requests back once MAX_UNANSWERED entries wait for the engine, and writes each turn in one file, in order', async () => {
    const log = new AheadLog(path, 41);
    try {
      const added = Array.from({ length: MAX_UNANSWERED }, () => log.add('test', [1, 'two']));
      expect(added[0].seq).to.equal(42);
      expect(log.usable, 'full').to.equal(false);
      await Promise.all(added.map((a) => a.written));
      const records = readRecords(`${path}-ahead-0`);
      expect(records.map((r) => r.seq)).to.deep.equal(added.map((a) => a.seq));
      expect(records[0].entries, 'the record around the text').to.deep.equal([
        { proc: 'test', packed: [1, 'two'], ahead: 42 },
      ]);
      expect(added[0].text).to.equal('[1,"two"]');
      log.answered(added[7].seq);
      expect(log.usable, 'one answered').to.equal(true);
    } finally {
      await log.close();
    }
  });

  /** Entries of 4 KB until the log's first file holds enough to be emptied, all written. */
  async function fill(log: AheadLog): Promise<number[]> {
    const added = Array.from({ length: Math.ceil(EMPTY_ABOVE / 4096) + 1 }, () => log.add('test', ['x'.repeat(4096)]));
    await Promise.all(added.map((a) => a.written));
    return added.map((a) => a.seq);
  }

  it('empties a file off the event loop once all of it is answered and committed, writing meanwhile to the other', async () => {
    const log = new AheadLog(path, 0);
    const sync = Object.getOwnPropertyDescriptor(fs, 'ftruncateSync')!;
    let syncCalls = 0;
    Object.defineProperty(fs, 'ftruncateSync', {
      ...sync,
      value: (...args: Parameters<typeof fs.ftruncateSync>) => {
        syncCalls++;
        return (sync.value as typeof fs.ftruncateSync)(...args);
      },
    });
    const first = `${path}-ahead-0`;
    try {
      const seqs = await fill(log);
      const last = seqs.pop()!;
      for (const seq of seqs) log.answered(seq);
      log.committed(last);
      expect(statSync(first).size, 'one entry still unanswered: kept').to.be.at.least(EMPTY_ABOVE);
      log.answered(last);
      const next = log.add('test', [1]); // while the first file is being emptied
      await next.written;
      expect(
        readRecords(`${path}-ahead-1`).map((r) => r.seq),
        'written to the other file',
      ).to.deep.equal([next.seq]);
      expect(await within(5000, () => statSync(first).size === 0), 'emptied').to.equal(true);
      expect(syncCalls, 'never on the event loop').to.equal(0);
      expect(
        readRecords(`${path}-ahead-1`).map((r) => r.seq),
        'the later entry kept',
      ).to.deep.equal([next.seq]);
    } finally {
      Object.defineProperty(fs, 'ftruncateSync', sync);
      await log.close();
    }
  });

  it('keeps a file whose entries are not all committed, and closes while one is being emptied', async () => {
    const log = new AheadLog(path, 0);
    const first = `${path}-ahead-0`;
    try {
      const seqs = await fill(log);
      for (const seq of seqs) log.answered(seq);
      log.committed(seqs[seqs.length - 2]);
      await new Promise((r) => setTimeout(r, 50));
      expect(statSync(first).size, 'the last entry is not committed').to.be.at.least(EMPTY_ABOVE);
      log.committed(seqs[seqs.length - 1]);
    } finally {
      await log.close(); // the emptying under way ends first
    }
    expect(statSync(first).size, 'emptied once closed').to.equal(0);
  });

  it('a write that fails fails every entry of its turn and each one after, and the log is no longer used', async () => {
    const log = new AheadLog(path, 0);
    const writev = Object.getOwnPropertyDescriptor(fs, 'writevSync')!;
    try {
      await log.add('test', [1]).written;
      // The next write fails as on a full disk.
      Object.defineProperty(fs, 'writevSync', {
        ...writev,
        value: () => {
          throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
        },
      });
      const turn = [log.add('test', [2]), log.add('test', [3])];
      const outcomes = await Promise.allSettled(turn.map((a) => a.written));
      expect(outcomes.map((o) => o.status)).to.deep.equal(['rejected', 'rejected']);
      expect(log.usable, 'broken').to.equal(false);
      Object.defineProperty(fs, 'writevSync', writev);
      const after = await Promise.allSettled([log.add('test', [4]).written]);
      expect(after[0].status, 'a later turn, the disk free again').to.equal('rejected');
      expect(readRecords(`${path}-ahead-0`).map((r) => r.seq)).to.deep.equal([1]);
    } finally {
      Object.defineProperty(fs, 'writevSync', writev);
      await log.close();
    }
  });
});
