import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore, type Store } from '../../src/store/index';
import type { SqliteDb } from '../../src/store/sqlite-db';
import { HoldBook } from '../../src/store/holds';
import { generationRecord } from '../helpers/generation';

const HASH = 'h'.repeat(64);

async function rowCount(store: Store, table: string): Promise<number> {
  return Number((await store.db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`))?.n);
}

describe('credit reservations held by the SQLite engine', function () {
  this.timeout(20000);
  let dir: string;
  let path: string;
  let store: Store;
  let accountId: string;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gw-holds-'));
    path = join(dir, 'store.db');
    store = await openStore({ driver: 'sqlite', path });
    accountId = (await store.accounts.create({ name: 'a', credits: 10_000 })).id;
    await store.keys.create({ hash: HASH, accountId, name: 'k', label: 'sk-...k' });
    await store.keys.update(HASH, { limit: 6_000 });
  });

  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a reservation is a hold, not a row: the account and the key show it as reserved, and it bounds the next', async () => {
    const r = await store.credit.reserve(accountId, HASH, 4_000);
    expect(r.ok).to.equal(true);
    expect(await rowCount(store, 'credit_reservations')).to.equal(0);
    expect((await (store.db as SqliteDb).status()).holds).to.equal(1);
    expect((await store.accounts.get(accountId))!.reserved).to.equal(4_000);
    expect((await store.keys.get(HASH))!.reserved).to.equal(4_000);
    expect(await store.credit.openReservations(accountId)).to.equal(1);

    // The key's limit (6,000) has 2,000 left beside the hold; the account (10,000) 6,000.
    expect(await store.credit.reserve(accountId, HASH, 2_001)).to.deep.equal({
      ok: false,
      limit: 'key',
      available: 2_000,
    });
    expect(await store.credit.reserve(accountId, null, 6_001)).to.deep.equal({
      ok: false,
      limit: 'account',
      available: 6_000,
    });

    expect(r.ok && (await store.credit.settle(r.id, 1_500, null))).to.equal(true);
    expect(r.ok && (await store.credit.settle(r.id, 1_500, null)), 'settling twice charges once').to.equal(false);
    const account = await store.accounts.get(accountId);
    expect([account!.usage, account!.reserved]).to.deep.equal([1_500, 0]);
    const key = await store.keys.get(HASH);
    expect([key!.usage, key!.windowUsage, key!.reserved]).to.deep.equal([1_500, 1_500, 0]);
    expect(await store.credit.ledgerSum(accountId)).to.equal(1_500);
    expect((await (store.db as SqliteDb).status()).holds).to.equal(0);
  });

  it('settlements committed together: one that fails rolls back alone and keeps its hold; the others land', async () => {
    const held = await Promise.all([1, 2, 3].map(() => store.credit.reserve(accountId, HASH, 1_000)));
    const ids = held.map((r) => (r.ok ? r.id : ''));
    // The three settle in one event-loop pass, so they reach the engine in one group commit.
    const bad = { sql: 'INSERT INTO no_such_table (x) VALUES (?)', params: [1] };
    const out = await Promise.allSettled(
      ids.map((id, i) =>
        store.credit.settle(id, 700, generationRecord({ id: `gen-${i}`, accountId, keyHash: HASH }), null, [
          ...(i === 1 ? [bad] : []),
        ]),
      ),
    );
    expect(out.map((o) => o.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    expect(await store.credit.ledgerSum(accountId)).to.equal(1_400);
    expect(await rowCount(store, 'generations')).to.equal(2);
    expect((await store.accounts.get(accountId))!.reserved, 'the failed one is still held').to.equal(1_000);
    // The sweep settles what a failed settlement left, at no charge.
    expect(await store.credit.releaseStale(0)).to.equal(1);
    const account = await store.accounts.get(accountId);
    expect([account!.usage, account!.reserved]).to.deep.equal([1_400, 0]);
  });

  it('holds end with their process: the database a crash leaves has nothing reserved', async () => {
    expect((await store.credit.reserve(accountId, HASH, 3_000)).ok).to.equal(true);
    const other = await openStore({ driver: 'sqlite', path }); // another process's view of the same file
    try {
      expect((await other.accounts.get(accountId))!.reserved).to.equal(0);
      expect(await other.credit.openReservations()).to.equal(0);
    } finally {
      await other.close();
    }
  });

  it('a worker thread that dies loses its holds, not their charges: the settlement charges what this process held', async () => {
    const r = await store.credit.reserve(accountId, HASH, 4_000);
    const link = (store.db as unknown as { link: { worker: { terminate(): Promise<number> } | null } }).link;
    await link.worker!.terminate();
    expect(r.ok && (await store.credit.settle(r.id, 2_500, null))).to.equal(true);
    expect(r.ok && (await store.credit.settle(r.id, 2_500, null)), 'and only once').to.equal(false);
    const account = await store.accounts.get(accountId);
    expect([account!.usage, account!.reserved]).to.deep.equal([2_500, 0]);
    expect(await store.credit.ledgerSum(accountId)).to.equal(2_500);
    expect((await store.keys.get(HASH))!.usage).to.equal(2_500);
  });

  it('a key whose window rolled over since its hold was made is charged in the window it reserved in', async () => {
    await store.keys.update(HASH, { limit: 6_000, limitReset: 'daily' });
    const yesterday = Date.now() - 86_400_000;
    const r = await store.credit.reserve(accountId, HASH, 5_000, yesterday);
    expect(r.ok && (await store.credit.settle(r.id, 5_000, null))).to.equal(true);
    expect((await store.credit.reserve(accountId, HASH, 1_001, yesterday)).ok, 'yesterday: 1,000 left').to.equal(false);
    // Today's window starts from zero: 5,000 fits its 6,000 (the account has 5,000 left).
    expect((await store.credit.reserve(accountId, HASH, 5_000)).ok, 'today: a new window').to.equal(true);
  });
});

describe('HoldBook', () => {
  it('undoes what was not kept, newest first, and keeps what was', () => {
    const book = new HoldBook();
    book.hold({ id: 'a', accountId: 'x', keyHash: 'k', amount: 5, createdAt: 1 });
    book.keep();
    book.release('a');
    book.hold({ id: 'b', accountId: 'x', keyHash: null, amount: 7, createdAt: 2 });
    expect([book.held('account', 'x'), book.held('key', 'k')]).to.deep.equal([7, 0]);
    book.undo();
    expect([book.held('account', 'x'), book.held('key', 'k'), book.count()]).to.deep.equal([5, 5, 1]);
    expect(() => book.hold({ id: 'a', accountId: 'y', keyHash: null, amount: 1, createdAt: 3 })).to.throw(/already/);
    expect(book.olderThan(1)).to.deep.equal(['a']);
  });
});
