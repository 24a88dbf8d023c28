import { expect } from 'chai';
import { appendFileSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { serialize } from 'node:v8';
import { crc32 } from 'node:zlib';
import {} from '../../src/store/index';
import { SqliteDb } from '../../src/store/engine/sqlite-db';
import { encodePayload } from '../../src/store/engine/redo-codec';
import type { SettleArgs } from '../../plugins/credit/store/settle';
import { settleWire } from '../../plugins/credit/store/wire';
import { generationRecord } from '../helpers/generation';
import { expectAllCharged, runKilledFixture, storeWithAccount, openChainStore } from '../helpers/store';

/** A whole record as src/store/engine/redo-log.ts frames it; `encode`: its payload (an older version's node:v8 by default). */
function record(seq: number, entries: unknown[], encode: (v: unknown) => Buffer = serialize): Buffer {
  const payload = encode({ seq, entries });
  const head = Buffer.alloc(8);
  head.writeUInt32LE(payload.length, 0);
  head.writeUInt32LE(crc32(payload), 4);
  return Buffer.concat([head, payload]);
}

describe('SQLite redo log: writes answered once logged, committed in groups', function () {
  this.timeout(60000);
  let dir: string;
  let path: string;
  let accountId: string;

  beforeEach(async () => ({ dir, path, accountId } = await storeWithAccount('gw-redo-')));

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('a SIGKILL before the commit loses nothing acknowledged, and the replay charges each settlement once', async () => {
    const acked = runKilledFixture<{ charged: number; logBytes: number }>('redo-crash', [path, accountId, '40']);
    expect(acked.logBytes, 'what was acknowledged was in the log, not committed').to.be.greaterThan(0);
    // A record the kill cut short (here: half of a whole one) ends the log.
    const whole = record(1_000_000, [{ sql: 'DELETE FROM accounts', params: [] }]);
    appendFileSync(`${path}-redo`, whole.subarray(0, whole.length >> 1));

    for (let round = 0; round < 2; round++) {
      const store = await openChainStore({ driver: 'sqlite', path }, { redo: true });
      try {
        expect((await (store.db as SqliteDb).status()).redo).to.equal(true);
        expect(statSync(`${path}-redo`).size, 'the log is empty once replayed').to.equal(0);
        await expectAllCharged(store, accountId, { ...acked, count: 40, prefix: 'redo-' }, `round ${round}: `);
      } finally {
        await store.close();
      }
    }
  });

  it('one process keeps the log: a second opener runs without it and replays nothing; reads see what was answered', async () => {
    const a = await openChainStore({ driver: 'sqlite', path }, { redo: true, commitMs: 60_000 });
    const b = await openChainStore({ driver: 'sqlite', path }, { redo: true });
    try {
      expect((await (a.db as SqliteDb).status()).redo).to.equal(true);
      expect((await (b.db as SqliteDb).status()).redo, 'the lock is taken').to.equal(false);
      await a.setMeta('answered', 'yes');
      expect(statSync(`${path}-redo`).size, 'logged, not committed').to.be.greaterThan(0);
      // A read through the engine's reader commits first: what was answered is seen, here and by the other process.
      expect(await a.getMeta('answered')).to.equal('yes');
      expect(statSync(`${path}-redo`).size).to.equal(0);
      expect(await b.getMeta('answered')).to.equal('yes');
      await a.setMeta('at-close', 'yes');
    } finally {
      await a.close();
      await b.close();
    }
    const c = await openChainStore({ driver: 'sqlite', path }, { redo: true });
    try {
      expect(await c.getMeta('at-close'), 'close commits what the log held').to.equal('yes');
    } finally {
      await c.close();
    }
  });

  it('a worker thread that dies with writes only logged: the next one takes the log and replays them', async () => {
    const db = new SqliteDb(join(dir, 'thread.db'), { redo: true, commitMs: 60_000 });
    try {
      await db.run('CREATE TABLE t (x INTEGER)');
      await db.run('INSERT INTO t (x) VALUES (1)');
      expect(statSync(join(dir, 'thread.db-redo')).size, 'logged, not committed').to.be.greaterThan(0);
      const link = (db as unknown as { link: { worker: { terminate(): Promise<number> } } }).link;
      await link.worker.terminate();
      expect((await db.status()).redo, 'the lock went with the thread').to.equal(true);
      expect(await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM t')).to.deep.equal({ n: 1 });
    } finally {
      await db.close();
    }
  });

  it("replays a log an older version wrote (node:v8 records) and this version's JSON records after them", async () => {
    const meta = 'INSERT INTO gateway_meta (key, value, updated_at) VALUES (?, ?, ?)';
    const old = record(1, [{ sql: meta, params: ['from-v8', 'yes', 1] }]);
    const json = record(2, [{ sql: meta, params: ['from-json', 'yes', 2] }], encodePayload);
    expect(old[8], 'node:v8 payload').to.equal(0xff);
    expect(String.fromCharCode(json[8]), 'JSON payload').to.equal('{');
    writeFileSync(`${path}-redo`, Buffer.concat([old, json]));
    const store = await openChainStore({ driver: 'sqlite', path }, { redo: true });
    try {
      expect(await store.getMeta('from-v8')).to.equal('yes');
      expect(await store.getMeta('from-json')).to.equal('yes');
      expect(statSync(`${path}-redo`).size, 'the log is empty once replayed').to.equal(0);
    } finally {
      await store.close();
    }
  });

  it("replays an older version's settlement (its arguments as an object) and this version's packed one", async () => {
    const settle = (n: number): SettleArgs => ({
      reservationId: `rsv_${n}`,
      charge: 100 * n,
      generation: generationRecord({
        id: `gen-${n}`,
        accountId,
        streamed: n === 2,
        metadata: { n },
        createdAt: 5_000 + n,
      }),
      overrun: null,
      now: 1_000 + n,
      writes: [],
      // the hold as the crashed process made it, in its own book: charged from here
      made: { id: `rsv_${n}`, accountId, keyHash: null, amount: 1_000, createdAt: 1_000, book: 'book_gone' },
    });
    const old = record(1, [{ proc: 'credit.settle', args: settle(1) }], encodePayload);
    const packed = record(2, [{ proc: 'credit.settle', packed: settleWire.pack(settle(2)) }], encodePayload);
    writeFileSync(`${path}-redo`, Buffer.concat([old, packed]));
    const store = await openChainStore({ driver: 'sqlite', path }, { redo: true });
    try {
      expect((await store.accounts.get(accountId))?.usage).to.equal(300);
      expect(await store.ledger.sum(accountId)).to.equal(300);
      for (const n of [1, 2]) {
        const g = await store.generations.get(`gen-${n}`);
        expect(g, `gen-${n}`).to.include({ accountId, streamed: n === 2, createdAt: 5_000 + n, cost: 100 * n });
        expect(g?.metadata).to.deep.equal({ n });
      }
    } finally {
      await store.close();
    }
  });

  it('a log that cannot be replayed keeps the store closed and the log as it was: nothing acknowledged is dropped', async () => {
    const bad = record(1, [{ sql: 'INSERT INTO no_such_table (x) VALUES (?)', params: [1] }]);
    writeFileSync(`${path}-redo`, bad);
    let error: unknown = null;
    try {
      const s = await openChainStore({ driver: 'sqlite', path }, { redo: true });
      await s.close();
    } catch (e) {
      error = e;
    }
    expect(String(error)).to.match(/redo log .* could not be replayed .*no_such_table/);
    expect(readFileSync(`${path}-redo`).equals(bad)).to.equal(true);
  });
});
