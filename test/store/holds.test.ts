import { expect } from 'chai';
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Store } from '../../src/store/index';
import type { SqliteDb } from '../../src/store/engine/sqlite-db';
import { HoldBook } from '../../src/store/engine/holds';
import { generationRecord } from '../helpers/generation';
import { creditOf, openChainStore } from '../helpers/store';

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
    store = await openChainStore({ driver: 'sqlite', path });
    accountId = (await store.accounts.create({ name: 'a', credits: 10_000 })).id;
    await store.keys.create({ hash: HASH, accountId, name: 'k', label: 'sk-...k' });
    await store.keys.update(HASH, { limit: 6_000 });
  });

  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a reservation is a hold, not a row: the account and the key show it as reserved, and it bounds the next', async () => {
    const r = await creditOf(store).reserve(accountId, HASH, 4_000);
    expect(r.ok).to.equal(true);
    expect(await rowCount(store, 'credit_reservations')).to.equal(0);
    expect((await (store.db as SqliteDb).status()).holds).to.equal(1);
    expect((await store.accounts.get(accountId))!.reserved).to.equal(4_000);
    expect((await store.keys.get(HASH))!.reserved).to.equal(4_000);
    expect(await creditOf(store).openReservations(accountId)).to.equal(1);

    // The key's limit (6,000) has 2,000 left beside the hold; the account (10,000) 6,000.
    expect(await creditOf(store).reserve(accountId, HASH, 2_001)).to.deep.equal({
      ok: false,
      limit: 'key',
      available: 2_000,
    });
    expect(await creditOf(store).reserve(accountId, null, 6_001)).to.deep.equal({
      ok: false,
      limit: 'account',
      available: 6_000,
    });

    expect(r.ok && (await creditOf(store).settle(r.id, 1_500, null))).to.equal(true);
    expect(r.ok && (await creditOf(store).settle(r.id, 1_500, null)), 'settling twice charges once').to.equal(false);
    const account = await store.accounts.get(accountId);
    expect([account!.usage, account!.reserved]).to.deep.equal([1_500, 0]);
    const key = await store.keys.get(HASH);
    expect([key!.usage, key!.windowUsage, key!.reserved]).to.deep.equal([1_500, 1_500, 0]);
    expect(await store.ledger.sum(accountId)).to.equal(1_500);
    expect((await (store.db as SqliteDb).status()).holds).to.equal(0);
  });

  it('settlements committed together: one that fails rolls back alone and keeps its hold; the others land', async () => {
    const held = await Promise.all([1, 2, 3].map(() => creditOf(store).reserve(accountId, HASH, 1_000)));
    const ids = held.map((r) => (r.ok ? r.id : ''));
    // The three settle in one event-loop pass, so they reach the engine in one group commit.
    const bad = { sql: 'INSERT INTO no_such_table (x) VALUES (?)', params: [1] };
    const out = await Promise.allSettled(
      ids.map((id, i) =>
        creditOf(store).settle(id, 700, generationRecord({ id: `gen-${i}`, accountId, keyHash: HASH }), null, [
          ...(i === 1 ? [bad] : []),
        ]),
      ),
    );
    expect(out.map((o) => o.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    expect(await store.ledger.sum(accountId)).to.equal(1_400);
    expect(await rowCount(store, 'generations')).to.equal(2);
    expect((await store.accounts.get(accountId))!.reserved, 'the failed one is still held').to.equal(1_000);
    // The sweep settles what a failed settlement left, at no charge.
    expect(await creditOf(store).releaseStale(0)).to.equal(1);
    const account = await store.accounts.get(accountId);
    expect([account!.usage, account!.reserved]).to.deep.equal([1_400, 0]);
  });

  it('holds end with their process: the database a crash leaves has nothing reserved', async () => {
    expect((await creditOf(store).reserve(accountId, HASH, 3_000)).ok).to.equal(true);
    const other = await openChainStore({ driver: 'sqlite', path }); // another process's view of the same file
    try {
      expect((await other.accounts.get(accountId))!.reserved).to.equal(0);
      expect(await creditOf(other).openReservations()).to.equal(0);
    } finally {
      await other.close();
    }
  });

  it('a worker thread that dies loses its holds, not their charges: the settlement charges what this process held', async () => {
    const r = await creditOf(store).reserve(accountId, HASH, 4_000);
    const link = (store.db as unknown as { link: { worker: { terminate(): Promise<number> } | null } }).link;
    await link.worker!.terminate();
    expect(r.ok && (await creditOf(store).settle(r.id, 2_500, null))).to.equal(true);
    expect(r.ok && (await creditOf(store).settle(r.id, 2_500, null)), 'and only once').to.equal(false);
    const account = await store.accounts.get(accountId);
    expect([account!.usage, account!.reserved]).to.deep.equal([2_500, 0]);
    expect(await store.ledger.sum(accountId)).to.equal(2_500);
    expect((await store.keys.get(HASH))!.usage).to.equal(2_500);
  });

  it('a key whose window rolled over since its hold was made is charged in the window it reserved in', async () => {
    await store.keys.update(HASH, { limit: 6_000, limitReset: 'daily' });
    const yesterday = Date.now() - 86_400_000;
    const r = await creditOf(store).reserve(accountId, HASH, 5_000, yesterday);
    expect(r.ok && (await creditOf(store).settle(r.id, 5_000, null))).to.equal(true);
    expect((await creditOf(store).reserve(accountId, HASH, 1_001, yesterday)).ok, 'yesterday: 1,000 left').to.equal(
      false,
    );
    // Today's window starts from zero: 5,000 fits its 6,000 (the account has 5,000 left).
    expect((await creditOf(store).reserve(accountId, HASH, 5_000)).ok, 'today: a new window').to.equal(true);
  });

  describe('decided on the main thread (src/store/local-credit.ts)', () => {
    /** Which of a store read asked first and a reservation asked after it answers first. */
    async function firstToAnswer(amount: number): Promise<string> {
      const order: string[] = [];
      await Promise.all([
        store.db.get('SELECT 1').then(() => order.push('read')),
        creditOf(store)
          .reserve(accountId, HASH, amount)
          .then(() => order.push('reserve')),
      ]);
      return order[0];
    }

    it('a reservation the known balances cover is held at once; one they do not is read from the store first', async () => {
      expect(await firstToAnswer(1_000), 'nothing known yet: the reservation waits its turn').to.equal('read');
      expect(await firstToAnswer(1_000), 'known: held without a round trip').to.equal('reserve');
      // 4,000 of the key's 6,000 are held now: 5,000 does not fit what is known, so the store decides (and refuses).
      expect(await firstToAnswer(5_000)).to.equal('read');
      expect(await creditOf(store).reserve(accountId, HASH, 4_001)).to.deep.equal({
        ok: false,
        limit: 'key',
        available: 4_000,
      });
      expect((await store.keys.get(HASH))!.reserved, 'the engine counts the holds made here').to.equal(2_000);
    });

    it('a reservation held here crosses to the store with its settlement: one message for both, nothing lost', async () => {
      const warm = await creditOf(store).reserve(accountId, HASH, 1_000); // learns the balances
      expect(warm.ok && (await creditOf(store).settle(warm.id, 1_000, null))).to.equal(true);
      const db = store.db as SqliteDb;
      const before = db.messages;
      const r = await creditOf(store).reserve(accountId, HASH, 2_000);
      await new Promise((res) => setTimeout(res, 20)); // the hold alone sends nothing, however long it waits
      expect(db.messages - before, 'a hold made here sends no message of its own').to.equal(0);
      expect((await store.keys.get(HASH))!.reserved, 'the read after it finds the hold in the engine').to.equal(2_000);
      expect(db.messages - before).to.equal(1);
      const r2 = await creditOf(store).reserve(accountId, HASH, 500);
      expect(r.ok && r2.ok).to.equal(true);
      const settled = await Promise.all([r, r2].map((x) => x.ok && creditOf(store).settle(x.id, 250, null)));
      expect(settled).to.deep.equal([true, true]);
      expect(db.messages - before, 'the second hold and both settlements went in one message').to.equal(2);
      const key = (await store.keys.get(HASH))!;
      expect([key.reserved, key.usage]).to.deep.equal([0, 1_500]);
    });

    it("an admin's change of a limit or of credit counts for the very next request", async () => {
      const r = await creditOf(store).reserve(accountId, HASH, 1_000);
      expect(r.ok && (await creditOf(store).settle(r.id, 500, null))).to.equal(true);
      await store.keys.update(HASH, { limit: 1_000 });
      expect(await creditOf(store).reserve(accountId, HASH, 600)).to.deep.equal({
        ok: false,
        limit: 'key',
        available: 500,
      });
      await store.accounts.addCredits(accountId, -9_000);
      expect(await creditOf(store).reserve(accountId, null, 600)).to.deep.equal({
        ok: false,
        limit: 'account',
        available: 500,
      });
    });

    it("another process's commit is seen at the next reading of any balance, or once what is known is a second old", async () => {
      const second = (await store.accounts.create({ name: 'b', credits: 100 })).id;
      const r = await creditOf(store).reserve(accountId, HASH, 1_000);
      expect(r.ok && (await creditOf(store).settle(r.id, 1_000, null))).to.equal(true);
      const other = await openChainStore({ driver: 'sqlite', path }); // the CLI, on the same file
      try {
        await other.keys.update(HASH, { limit: 2_000 });
      } finally {
        await other.close();
      }
      // A settlement of another account brings the file's data_version: nothing known before it holds.
      const s = await creditOf(store).reserve(second, null, 10);
      expect(s.ok && (await creditOf(store).settle(s.id, 10, null))).to.equal(true);
      expect(await creditOf(store).reserve(accountId, HASH, 1_001)).to.deep.equal({
        ok: false,
        limit: 'key',
        available: 1_000,
      });
    });

    it("another process's commit is seen by a settlement that crosses alone (data_version read anew each flush)", async () => {
      const second = (await store.accounts.create({ name: 'b', credits: 100 })).id;
      const r = await creditOf(store).reserve(accountId, HASH, 1_000);
      expect(r.ok && (await creditOf(store).settle(r.id, 1_000, null))).to.equal(true);
      const warm = await creditOf(store).reserve(second, null, 10); // the second account's balance is known from here on
      expect(warm.ok && (await creditOf(store).settle(warm.id, 10, null))).to.equal(true);
      // Two holds made here; both are told to the engine with the first settlement, so the second crosses alone.
      const [x, y] = [await creditOf(store).reserve(second, null, 10), await creditOf(store).reserve(second, null, 10)];
      expect(x.ok && (await creditOf(store).settle(x.id, 10, null))).to.equal(true);
      const other = await openChainStore({ driver: 'sqlite', path });
      try {
        await other.keys.update(HASH, { limit: 2_000 });
      } finally {
        await other.close();
      }
      expect(y.ok && (await creditOf(store).settle(y.id, 10, null))).to.equal(true);
      expect(await creditOf(store).reserve(accountId, HASH, 1_001)).to.deep.equal({
        ok: false,
        limit: 'key',
        available: 1_000,
      });
    });

    it('a balance known for over a second is read again before it decides', async () => {
      expect((await creditOf(store).reserve(accountId, HASH, 100)).ok).to.equal(true);
      const other = await openChainStore({ driver: 'sqlite', path });
      try {
        await other.keys.update(HASH, { limit: 500 });
      } finally {
        await other.close();
      }
      await new Promise((r) => setTimeout(r, 1_100));
      expect(await creditOf(store).reserve(accountId, HASH, 401)).to.deep.equal({
        ok: false,
        limit: 'key',
        available: 400,
      });
    });

    it('any sequence of reservations and settlements refuses exactly what the committed balances cannot cover', async () => {
      const op = fc.oneof(
        fc.record({
          kind: fc.constant('reserve' as const),
          amount: fc.integer({ min: 1, max: 4_000 }),
          key: fc.boolean(),
        }),
        fc.record({
          kind: fc.constant('settle' as const),
          pick: fc.nat(),
          part: fc.double({ min: 0, max: 1, noNaN: true }),
        }),
      );
      await fc.assert(
        fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 25 }), async (ops) => {
          const id = (await store.accounts.create({ name: `p-${Math.random()}`, credits: 10_000 })).id; // names are unique
          const hash = `p${Math.random().toString(36).slice(2)}`.padEnd(64, '0');
          await store.keys.create({ hash, accountId: id, name: 'p', label: 'sk-...p' });
          await store.keys.update(hash, { limit: 6_000 });
          // The model: what is spent and what is held, of the account and of the key.
          let spent = 0;
          let keySpent = 0;
          const open: Array<{ id: string; amount: number; key: boolean }> = [];
          const held = (key: boolean) => open.filter((h) => !key || h.key).reduce((n, h) => n + h.amount, 0);
          for (const o of ops) {
            if (o.kind === 'reserve') {
              const fitsAccount = 10_000 - spent - held(false) >= o.amount;
              const fitsKey = !o.key || 6_000 - keySpent - held(true) >= o.amount;
              const r = await creditOf(store).reserve(id, o.key ? hash : null, o.amount);
              expect(r.ok, JSON.stringify(o)).to.equal(fitsAccount && fitsKey);
              if (r.ok) open.push({ id: r.id, amount: o.amount, key: o.key });
            } else if (open.length > 0) {
              const [h] = open.splice(o.pick % open.length, 1);
              const cost = Math.floor(h.amount * o.part);
              expect(await creditOf(store).settle(h.id, cost, null)).to.equal(true);
              spent += cost;
              if (h.key) keySpent += cost;
            }
          }
          const account = await store.accounts.get(id);
          expect([account!.usage, account!.reserved]).to.deep.equal([spent, held(false)]);
          expect((await store.keys.get(hash))!.usage).to.equal(keySpent);
        }),
        { numRuns: 40 },
      );
    });

    it('concurrent reservations never hold more than the balances, whichever path decides them', async () => {
      const results = await Promise.all(
        Array.from({ length: 60 }, (_, i) =>
          creditOf(store).reserve(accountId, i % 2 ? HASH : null, 250 + (i % 7) * 50),
        ),
      );
      const ok = results.flatMap((r, i) => (r.ok ? [{ id: r.id, key: i % 2 === 1, amount: 250 + (i % 7) * 50 }] : []));
      const total = ok.reduce((n, h) => n + h.amount, 0);
      const keyTotal = ok.filter((h) => h.key).reduce((n, h) => n + h.amount, 0);
      expect(total).to.be.at.most(10_000);
      expect(keyTotal).to.be.at.most(6_000);
      expect(total, 'and refuses only what would not fit').to.be.above(10_000 - 550);
      expect((await store.accounts.get(accountId))!.reserved).to.equal(total);
      await Promise.all(ok.map((h) => creditOf(store).settle(h.id, h.amount, null)));
      const account = await store.accounts.get(accountId);
      expect([account!.usage, account!.reserved]).to.deep.equal([total, 0]);
    });
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
