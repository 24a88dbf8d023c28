import { expect } from 'chai';
import fc from 'fast-check';
import type { StoreConfig } from '../../src/config/types';
import { type Store } from '../../src/store/index';
import { reserveProc, type Overrun } from '../../plugins/credit/store/reserve';
import { settleProc } from '../../plugins/credit/store/settle';
import { generationRecord } from '../helpers/generation';
import { freshPostgresUrl, POSTGRES_URL } from '../helpers/postgres';
import { creditOf, openChainStore } from '../helpers/store';

const KEYS = ['a'.repeat(64), 'b'.repeat(64), 'c'.repeat(64)];
/** Two moments in different days, weeks and months (UTC): holds made at each fall in different limit windows. */
const TIMES = [Date.UTC(2026, 9, 31, 23, 59, 0), Date.UTC(2026, 10, 2, 0, 1, 0)];

interface Item {
  account: 0 | 1;
  key: 0 | 1 | 2 | null;
  /** a hold made on the main thread, or a reservation row (PostgreSQL's kind, or an older version's) */
  row: boolean;
  amount: number;
  charge: number;
  overrun: Overrun | null;
  generation: boolean;
  time: 0 | 1;
  /** settle the reservation of the item before again instead of this one's */
  again: boolean;
}

const item: fc.Arbitrary<Item> = fc.record({
  account: fc.constantFrom(0 as const, 1 as const),
  key: fc.constantFrom(0 as const, 1 as const, 2 as const, null),
  row: fc.boolean(),
  amount: fc.integer({ min: 1, max: 5_000 }),
  charge: fc.oneof(fc.integer({ min: 0, max: 6_000 }), fc.constantFrom(NaN, -1, 0.5)),
  overrun: fc.option(fc.record({ amount: fc.integer({ min: 1, max: 9_000 }), reason: fc.constant('upstream_said') })),
  generation: fc.boolean(),
  time: fc.constantFrom(0 as const, 1 as const),
  again: fc.boolean(),
});

/** A store with two accounts and three keys (a daily limit, none, a monthly limit), keys' windows from long ago. */
async function world(config: StoreConfig = { driver: 'memory' }): Promise<{ store: Store; accounts: string[] }> {
  const store = await openChainStore(config);
  const accounts = [];
  for (const name of ['x', 'y']) accounts.push((await store.accounts.create({ name, credits: 1e12 })).id);
  for (const [i, hash] of KEYS.entries()) {
    await store.keys.create({ hash, accountId: accounts[i % 2], name: `k${i}`, label: 'sk-...k' });
    if (i !== 1) await store.keys.update(hash, { limit: 1e9, limitReset: i === 0 ? 'daily' : 'monthly' });
    await store.db.run('UPDATE api_keys SET window_start = ?, window_usage = ? WHERE hash = ?', [0, 77, hash]);
  }
  return { store, accounts };
}

/** Reserve for every item, then settle them: one at a time, or all in one turn (one group commit). */
async function play(
  items: Item[],
  together: boolean,
  config?: StoreConfig,
): Promise<{ settled: boolean[]; state: unknown; transactions: number }> {
  const { store, accounts } = await world(config);
  let transactions = 0;
  const rounds = store.db.rounds?.bind(store.db);
  if (rounds) store.db.rounds = (fn, idempotent) => (transactions++, rounds(fn, idempotent));
  try {
    const ids: string[] = [];
    for (const [n, it] of items.entries()) {
      const accountId = accounts[it.key === null ? it.account : it.key % 2];
      const keyHash = it.key === null ? null : KEYS[it.key];
      const now = TIMES[it.time];
      if (it.row) {
        const id = `rsv_row_${n}`;
        const r = await store.db.call(reserveProc, { id, accountId, keyHash, amount: it.amount, now });
        expect(r.ok).to.equal(true);
        ids.push(id);
      } else {
        const r = await creditOf(store).reserve(accountId, keyHash, it.amount, now);
        if (!r.ok) throw new Error('reservation refused');
        ids.push(r.id);
      }
    }
    const settle = (it: Item, n: number) => {
      const id = it.again && n > 0 ? ids[n - 1] : ids[n];
      const accountId = accounts[it.key === null ? it.account : it.key % 2];
      const keyHash = it.key === null ? null : KEYS[it.key];
      const gen = it.generation ? generationRecord({ id: `gen_${n}`, accountId, keyHash, createdAt: 1 }) : null;
      return creditOf(store).settle(id, it.charge, gen, it.overrun);
    };
    const settled: boolean[] = [];
    if (together) settled.push(...(await Promise.all(items.map(settle))));
    else for (const [n, it] of items.entries()) settled.push(await settle(it, n));
    const state = {
      // Accounts by name: their ids are random, and differ between the two worlds.
      accounts: await store.db.all('SELECT name, credits, usage, reserved FROM accounts ORDER BY name'),
      keys: await store.db.all('SELECT hash, usage, window_usage, window_start, reserved FROM api_keys ORDER BY hash'),
      ledger: await store.db.all(
        'SELECT a.name, l.key_hash, l.generation_id, l.kind, l.amount FROM credit_ledger l ' +
          // ids made in the same millisecond are not in order: the rows compared as a set
          'JOIN accounts a ON a.id = l.account_id ORDER BY a.name, l.key_hash, l.generation_id, l.amount',
      ),
      generations: await store.db.all('SELECT id, cost, overrun, overrun_reason FROM generations ORDER BY id'),
      // Those reserve() made have random ids (rows on PostgreSQL): counted, not named.
      rows: (await store.db.all<{ id: string }>('SELECT id FROM credit_reservations ORDER BY id'))
        .map((r) => (r.id.startsWith('rsv_row_') ? r.id : 'rsv_random'))
        .sort(),
      holds: await creditOf(store).openReservations(accounts[0]),
    };
    return { settled, state, transactions };
  } finally {
    await store.close();
  }
}

describe('settlements of one group commit, in one pass (Proc.many)', function () {
  this.timeout(120_000);

  it('leave balances, key windows, the ledger and generation records exactly as settling one at a time', async () => {
    const many = settleProc.many!;
    let batched = 0;
    settleProc.many = (args, holds) => ((batched += args.length), many(args, holds));
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(item, { minLength: 2, maxLength: 12 }), async (items) => {
          const one = await play(items, false);
          const all = await play(items, true);
          expect(all.settled).to.deep.equal(one.settled);
          expect(all.state).to.deep.equal(one.state);
        }),
        { numRuns: 60 },
      );
    } finally {
      settleProc.many = many;
    }
    expect(batched, 'the settlements reached the engine together').to.be.greaterThan(60 * 2);
  });

  it('one that fails is refused alone, the others settle in one pass', async () => {
    const { store, accounts } = await world();
    try {
      const held = await Promise.all([1, 2, 3].map(() => creditOf(store).reserve(accounts[0], null, 1_000)));
      const ids = held.map((r) => (r.ok ? r.id : ''));
      // The same generation id twice: the second record breaks the primary key.
      const gen = (i: number) => generationRecord({ id: i === 2 ? 'gen_0' : `gen_${i}`, accountId: accounts[0] });
      const out = await Promise.allSettled(ids.map((id, i) => creditOf(store).settle(id, 400, gen(i))));
      expect(out.map((o) => o.status)).to.deep.equal(['fulfilled', 'fulfilled', 'rejected']);
      const a = await store.accounts.get(accounts[0]);
      expect([a!.usage, a!.reserved]).to.deep.equal([800, 1_000]);
      expect(await store.ledger.sum(accounts[0])).to.equal(800);
    } finally {
      await store.close();
    }
  });
});

describe('PostgreSQL settlements committed in batches', function () {
  this.timeout(180_000);
  before(function () {
    if (!POSTGRES_URL) {
      console.warn('    ! GATEWAY_TEST_POSTGRES_URL is not set; the PostgreSQL batch test did not run');
      this.skip();
    }
  });

  it('leave balances, key windows, the ledger and generation records exactly as settling one at a time', async () => {
    let settlements = 0;
    let transactions = 0;
    const pg = async (): Promise<StoreConfig> => ({ driver: 'postgres', url: await freshPostgresUrl(), pool_size: 4 });
    await fc.assert(
      fc.asyncProperty(fc.array(item, { minLength: 2, maxLength: 12 }), async (items) => {
        const one = await play(items, false, await pg());
        const all = await play(items, true, await pg());
        expect(all.settled).to.deep.equal(one.settled);
        expect(all.state).to.deep.equal(one.state);
        expect(one.transactions, 'one at a time: a transaction each').to.equal(items.length);
        // The first alone, the rest as one batch while it commits; a repeat of a reservation waits for a later one.
        expect(all.transactions).to.be.at.most(2 + items.filter((it) => it.again).length);
        settlements += items.length;
        transactions += all.transactions;
      }),
      { numRuns: 12 },
    );
    expect(transactions, 'settlements made at once were committed together').to.be.below(settlements);
  });
  it('a reservation settled at once by two stores (as two processes: each its own pool and batches) and twice by one is charged once', async () => {
    const url = await freshPostgresUrl();
    const [a, b] = [
      await openChainStore({ driver: 'postgres', url, pool_size: 4 }),
      await openChainStore({ driver: 'postgres', url, pool_size: 4 }),
    ];
    try {
      const accountId = (await a.accounts.create({ name: 'x', credits: 1e12 })).id;
      const ids: string[] = [];
      for (let i = 0; i < 40; i++) {
        const r = await creditOf(a).reserve(accountId, null, 1_000);
        if (r.ok) ids.push(r.id);
      }
      const gen = (i: number, by: string) => generationRecord({ id: `gen_${i}_${by}`, accountId });
      const settled = await Promise.all(
        ids.map((id, i) =>
          Promise.all([
            creditOf(a).settle(id, 300, gen(i, 'a')),
            creditOf(b).settle(id, 300, gen(i, 'b')),
            creditOf(a).settle(id, 300, gen(i, 'a2')),
          ]),
        ),
      );
      expect(settled.map((s) => s.filter(Boolean).length)).to.deep.equal(ids.map(() => 1));
      const acct = await a.accounts.get(accountId);
      expect([acct!.usage, acct!.reserved]).to.deep.equal([300 * ids.length, 0]);
      expect(await a.ledger.sum(accountId)).to.equal(300 * ids.length);
      const records = await a.db.get<{ n: unknown }>('SELECT COUNT(*) AS n FROM generations');
      expect(Number(records?.n)).to.equal(ids.length);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
