import { randomId } from '../ids';
import { get, Rollback, run, type Db, type Proc } from './db';
import { windowStart } from './keys';
import { GENERATION_INSERT, generationParams, type Generation } from './generations';
import { num } from './money';
import type { PendingWrite } from './request-batch';

/** Usage beyond what the request reserved: `amount` nano-credits the operator carries, and why. */
export interface Overrun {
  amount: number;
  reason: string;
}

export type ReserveResult = { ok: true; id: string } | { ok: false; limit: 'account' | 'key'; available: number };

/**
 * Credit that cannot be overspent: a request first reserves the most it can cost,
 * atomically against both the account balance and the key's limit (one transaction,
 * conditional updates), then settles to the real cost. Reservations are rows, so those
 * left by a crash can be released; settling is idempotent.
 */
interface ReserveArgs {
  id: string;
  accountId: string;
  keyHash: string | null;
  amount: number;
  now: number;
}

/** The start of the key's current limit window (params: the daily, weekly and monthly starts). */
const WINDOW_START =
  "CASE limit_reset WHEN 'daily' THEN CAST(? AS BIGINT) WHEN 'weekly' THEN CAST(? AS BIGINT) " +
  'ELSE CAST(? AS BIGINT) END';
/** The key's window has rolled over: its usage so far belongs to a past window (params: as WINDOW_START). */
const ROLLED = `(limit_reset IS NOT NULL AND window_start < ${WINDOW_START})`;
/** The key's usage in its current window (params: as WINDOW_START). */
const WINDOW_USAGE = `CASE WHEN ${ROLLED} THEN 0 ELSE window_usage END`;
/**
 * Reserve against the key's limit, in its current window: a window that has rolled over restarts from zero in the
 * same statement (every right-hand side reads the row as it was). Params: window starts x3, amount, hash, window
 * starts, amount.
 */
const KEY_RESERVE = `UPDATE api_keys SET window_usage = ${WINDOW_USAGE},
  window_start = CASE WHEN ${ROLLED} THEN ${WINDOW_START} ELSE window_start END, reserved = reserved + ?
  WHERE hash = ? AND (credit_limit IS NULL OR credit_limit - ${WINDOW_USAGE} - reserved >= ?)`;

/** Reserve against the account and the key, or roll back and say which one refused and what it has left. */
export const reserveProc: Proc<ReserveArgs, ReserveResult> = {
  name: 'credit.reserve',
  *body({ id, accountId, keyHash, amount, now }) {
    const a = yield* run(
      'UPDATE accounts SET reserved = reserved + ? WHERE id = ? AND credits - usage - reserved >= ?',
      [amount, accountId, amount],
    );
    if (a.changes === 0) {
      const row = yield* get<{ free: unknown }>(
        'SELECT credits - usage - reserved AS free FROM accounts WHERE id = ?',
        [accountId],
      );
      throw new Rollback<ReserveResult>({ ok: false, limit: 'account', available: Math.max(0, num(row?.free)) });
    }
    if (keyHash) {
      const ws = [windowStart('daily', now), windowStart('weekly', now), windowStart('monthly', now)];
      // One statement: a key whose limit window has rolled over starts the new window from zero, and reserves in it.
      const k = yield* run(KEY_RESERVE, [...ws, ...ws, ...ws, amount, keyHash, ...ws, amount]);
      if (k.changes === 0) {
        const row = yield* get<{ free: unknown }>(
          `SELECT credit_limit - ${WINDOW_USAGE} - reserved AS free FROM api_keys WHERE hash = ?`,
          [...ws, keyHash],
        );
        throw new Rollback<ReserveResult>({ ok: false, limit: 'key', available: Math.max(0, num(row?.free)) });
      }
    }
    yield* run(
      'INSERT INTO credit_reservations (id, account_id, key_hash, amount, created_at) VALUES (?, ?, ?, ?, ?)',
      [id, accountId, keyHash, amount, now],
    );
    return { ok: true, id };
  },
};

interface SettleArgs {
  reservationId: string;
  /** What the answer's usage costs (nano-credits); charged up to the reservation, the rest is an overrun. */
  charge: number;
  generation: Generation | null;
  overrun: Overrun | null;
  now: number;
  /** Writes of the same request committed in this transaction (e.g. its stored response); idempotent upserts. */
  writes: PendingWrite[];
}

/** Release a reservation, charge the cost (ledger row) and write the generation record; false when already settled. */
export const settleProc: Proc<SettleArgs, boolean> = {
  name: 'credit.settle',
  idempotent: true, // the reservation row is gone after the first
  *body({ reservationId, charge, generation, overrun, now, writes }) {
    for (const w of writes) yield* run(w.sql, w.params);
    const r = yield* get<{ account_id: string; key_hash: string | null; amount: unknown }>(
      'DELETE FROM credit_reservations WHERE id = ? RETURNING account_id, key_hash, amount',
      [reservationId],
    );
    if (!r) return false;
    const reserved = num(r.amount);
    // The last line of defence: nothing is charged beyond what was reserved (the rest is an overrun).
    const valid = Number.isSafeInteger(charge) && charge >= 0;
    const cost = valid ? Math.min(charge, reserved) : reserved;
    const excess = (overrun?.amount ?? 0) + (valid ? charge - cost : 0);
    const reason = overrun?.reason ?? (valid ? (excess > 0 ? 'usage_above_bound' : null) : 'malformed_usage');
    yield* run('UPDATE accounts SET reserved = reserved - ?, usage = usage + ?, updated_at = ? WHERE id = ?', [
      reserved,
      cost,
      now,
      r.account_id,
    ]);
    if (r.key_hash)
      yield* run(
        'UPDATE api_keys SET reserved = reserved - ?, usage = usage + ?, window_usage = window_usage + ? WHERE hash = ?',
        [reserved, cost, cost, r.key_hash],
      );
    if (cost !== 0) {
      yield* run(
        'INSERT INTO credit_ledger (id, account_id, key_hash, generation_id, kind, amount, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
        [randomId('led_'), r.account_id, r.key_hash, generation?.id ?? null, 'charge', cost, now],
      );
    }
    if (generation) {
      yield* run(GENERATION_INSERT, generationParams({ ...generation, cost }));
      if (reason !== null)
        yield* run('UPDATE generations SET overrun = ?, overrun_reason = ? WHERE id = ?', [
          Math.min(excess, Number.MAX_SAFE_INTEGER),
          reason,
          generation.id,
        ]);
    }
    return true;
  },
};

export class CreditRepo {
  constructor(private readonly db: Db) {}

  reserve(accountId: string, keyHash: string | null, amount: number, now = Date.now()): Promise<ReserveResult> {
    return this.db.call(reserveProc, { id: randomId('rsv_'), accountId, keyHash, amount, now });
  }

  /**
   * Release the reservation and charge `charge` (nano-credits, at most the reservation; any
   * excess is recorded as an overrun), writing the ledger entry and the generation record in
   * the same transaction. Settling twice charges once.
   */
  settle(
    reservationId: string,
    charge: number,
    generation: Generation | null,
    overrun: Overrun | null = null,
    writes: PendingWrite[] = [],
  ): Promise<boolean> {
    return this.db.call(settleProc, { reservationId, charge, generation, overrun, now: Date.now(), writes });
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
    const stale = await this.db.all<{ id: string }>('SELECT id FROM credit_reservations WHERE created_at <= ?', [
      now - olderThanMs,
    ]);
    let n = 0;
    for (const s of stale) if (await this.settle(s.id, 0, null)) n++;
    return n;
  }

  async ledgerSum(accountId: string): Promise<number> {
    const r = await this.db.get<{ s: unknown }>(
      'SELECT COALESCE(SUM(amount), 0) AS s FROM credit_ledger WHERE account_id = ?',
      [accountId],
    );
    return num(r?.s);
  }

  async openReservations(accountId?: string): Promise<number> {
    const r = accountId
      ? await this.db.get<{ n: unknown }>('SELECT COUNT(*) AS n FROM credit_reservations WHERE account_id = ?', [
          accountId,
        ])
      : await this.db.get<{ n: unknown }>('SELECT COUNT(*) AS n FROM credit_reservations');
    return num(r?.n);
  }
}
