import * as door from '../../../src/plugin';
import type { Db, Generation, PendingWrite, Store } from '../../../src/plugin';
import { countHoldsProc, reserveProc, staleHoldsProc, windowStarts, type Overrun, type ReserveResult } from './reserve';
import { settleProc, type SettleArgs, type SettleResult } from './settle';
import { LocalCredit, type CountsWrites } from './local-credit';
import { SettlementBatches } from './settle-batches';
import type { RoundsDb } from './settle-rows';

// Read once, at load: a name the door re-exports is a getter, and these are called for every request.
const { num, randomId } = door;

/** PostgreSQL's reservation in one statement (the credit_calls migration). */
const RESERVE_CALL = 'SELECT refused, available FROM credit_reserve(?, ?, ?, ?, ?, ?, ?, ?)';

/** One per database: the holds this thread decides on are the process's (two books on one store would overspend). */
const perDb = new WeakMap<Db, CreditReservations>();

/**
 * Credit as the credit plugin uses it: reserve before the upstream call, settle to the real cost after (the
 * procedures in ./reserve.ts and ./settle.ts), release what a crash left. The balances and the ledger it charges are
 * the core's (accounts, keys, credit_ledger, generations).
 */
export class CreditReservations {
  /** SQLite: holds decided on this thread (./local-credit.ts); PostgreSQL's replicas share rows. */
  private readonly local: LocalCredit | null;
  /** PostgreSQL: settlements committed in batches. */
  private readonly batches: SettlementBatches | null;

  /** The one of `store`'s database (every gateway set up on a shared store uses the same). */
  static of(store: Pick<Store, 'db' | 'generations'>): CreditReservations {
    let r = perDb.get(store.db);
    if (!r) perDb.set(store.db, (r = new CreditReservations(store.db, store.generations)));
    return r;
  }

  private constructor(
    private readonly db: Db,
    private readonly records: { noteRecorded(): void },
  ) {
    this.local =
      db.dialect === 'sqlite' && db.foreignWrites !== undefined ? new LocalCredit(db as Db & CountsWrites) : null;
    this.batches = db.rounds ? new SettlementBatches(db as RoundsDb) : null;
  }

  reserve(accountId: string, keyHash: string | null, amount: number, now = Date.now()): Promise<ReserveResult> {
    if (this.local) return this.local.reserve(accountId, keyHash, amount, now);
    const id = randomId('rsv_');
    if (this.db.dialect === 'postgres') return this.reserveInOne(id, accountId, keyHash, amount, now);
    return this.db.call(reserveProc, { id, accountId, keyHash, amount, now });
  }

  /** PostgreSQL: one statement, repeated safely after a lost connection (the function reserves an id once). */
  private async reserveInOne(
    id: string,
    accountId: string,
    keyHash: string | null,
    amount: number,
    now: number,
  ): Promise<ReserveResult> {
    const r = await this.db.get<{ refused: 'account' | 'key' | null; available: unknown }>(RESERVE_CALL, [
      id,
      accountId,
      keyHash,
      amount,
      now,
      ...windowStarts(now),
    ]);
    if (r?.refused) return { ok: false, limit: r.refused, available: Math.max(0, num(r.available)) };
    return { ok: true, id };
  }

  /**
   * Release the reservation and charge `charge` (nano-credits, at most the reservation; any
   * excess is recorded as an overrun), writing the ledger entry and the generation record in
   * the same transaction. Settling twice charges once.
   */
  async settle(
    reservationId: string,
    charge: number,
    generation: Generation | null,
    overrun: Overrun | null = null,
    writes: PendingWrite[] = [],
  ): Promise<boolean> {
    return this.settleNow(this.settlement(reservationId, charge, generation, overrun, writes));
  }

  private async settleNow({ args, epoch }: { args: SettleArgs; epoch: number }): Promise<boolean> {
    const r = this.batches ? await this.batches.settle(args) : await this.db.call(settleProc, args);
    // After it committed: a settlement that failed keeps its hold, and may be retried.
    this.answered(args.reservationId, args.generation !== null, r, epoch);
    return r.settled;
  }

  /** A settlement's arguments, with the hold as this thread made it, and the epoch its answer's balances are of. */
  private settlement(
    reservationId: string,
    charge: number,
    generation: Generation | null,
    overrun: Overrun | null,
    writes: PendingWrite[],
  ): { args: SettleArgs; epoch: number } {
    const made = this.local?.made(reservationId) ?? null;
    const args = { reservationId, charge, generation, overrun, now: Date.now(), writes, made };
    return { args, epoch: this.local?.epoch() ?? 0 };
  }

  /**
   * The engine answered a settlement (null: an engine had run it from the ahead log): its hold is no longer counted.
   */
  private answered(reservationId: string, recorded: boolean, r: SettleResult | null, epoch: number): void {
    this.local?.settled(reservationId, r?.committed ?? null, epoch);
    if (recorded && r?.settled) this.records.noteRecorded();
  }

  /**
   * settle(), done once the settlement is in the SQLite store's ahead log rather than once the store's worker ran it
   * (the engine's ahead log): a request then never waits for that thread. If the worker then refuses it, `refused`
   * is told why (the caller may settle again another way); its hold is counted until the worker answers. Elsewhere
   * (PostgreSQL, a CLI's store) it is settle().
   */
  async settleLogged(
    reservationId: string,
    charge: number,
    generation: Generation | null,
    overrun: Overrun | null,
    writes: PendingWrite[],
    refused: (e: unknown) => void,
  ): Promise<void> {
    const settlement = this.settlement(reservationId, charge, generation, overrun, writes);
    const { args, epoch } = settlement;
    const call = this.db.callLogged?.(settleProc, args) ?? null;
    if (!call) {
      await this.settleNow(settlement);
      return;
    }
    let logged = false;
    // Only what the answer needs is kept until it comes (after the worker's next flush): not the arguments.
    const recorded = generation !== null;
    call.answered.then(
      (r) => this.answered(reservationId, recorded, r, epoch),
      (e: unknown) => logged && refused(e),
    );
    await call.logged;
    logged = true;
  }

  /** The overrun recorded on a generation (nano-credits beyond its reservation, and why), if any. */
  async overrun(generationId: string): Promise<Overrun | null> {
    const r = await this.db.get<{ overrun: unknown; overrun_reason: string | null }>(
      'SELECT overrun, overrun_reason FROM generations WHERE id = ?',
      [generationId],
    );
    return r && r.overrun_reason ? { amount: num(r.overrun), reason: r.overrun_reason } : null;
  }

  /** Release reservations older than `olderThanMs` (left by a crashed process); returns how many. */
  async releaseStale(olderThanMs: number, now = Date.now()): Promise<number> {
    const before = now - olderThanMs;
    // On SQLite every reservation is a hold this process made (rows of an older version are released at start-up,
    // with olderThanMs 0): none it knows of is that old, so none is, and the store is not woken to say so.
    if (this.local && olderThanMs > 0 && this.local.olderThan(before).length === 0) return 0;
    const rows = await this.db.all<{ id: string }>('SELECT id FROM credit_reservations WHERE created_at <= ?', [
      before,
    ]);
    const held = this.db.dialect === 'sqlite' ? await this.db.call(staleHoldsProc, { before }) : [];
    // And holds of a book that died with its worker thread, as this process made them.
    const made = this.local?.olderThan(before) ?? [];
    let n = 0;
    for (const id of new Set([...rows.map((r) => r.id), ...held, ...made])) if (await this.settle(id, 0, null)) n++;
    return n;
  }

  async openReservations(accountId?: string): Promise<number> {
    const r = accountId
      ? await this.db.get<{ n: unknown }>('SELECT COUNT(*) AS n FROM credit_reservations WHERE account_id = ?', [
          accountId,
        ])
      : await this.db.get<{ n: unknown }>('SELECT COUNT(*) AS n FROM credit_reservations');
    const held = this.db.dialect === 'sqlite' ? await this.db.call(countHoldsProc, { accountId }) : 0;
    return num(r?.n) + held;
  }
}
