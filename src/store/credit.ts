import { orderedId } from '../ids';
import { get, Rollback, run, type Proc, type Step } from './db';
import type { Hold, HoldBook } from './holds';
import { windowStart, type LimitReset } from './keys';
import { GENERATION_INSERT, generationParams, type Generation } from './generations';
import { num, numOrNull } from './money';
import type { PendingWrite } from './request-batch';
import { holdWire, settleWire } from './credit-wire';

/** Usage beyond what the request reserved: `amount` nano-credits the operator carries, and why. */
export interface Overrun {
  amount: number;
  reason: string;
}

export type ReserveResult =
  | { ok: true; id: string; /** the SQLite engine's HoldBook that holds it */ book?: string }
  | { ok: false; limit: 'account' | 'key'; available: number };

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

/** The daily, weekly and monthly window starts at `now`, as WINDOW_START takes them. */
function windowStarts(now: number): [number, number, number] {
  return [windowStart('daily', now), windowStart('weekly', now), windowStart('monthly', now)];
}

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
      const ws = windowStarts(now);
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

/** A key's credit limit as committed: what its free credit at any moment follows from. */
export interface KeyCredit {
  /** nano-credits per window; null: no limit */
  limit: number | null;
  reset: LimitReset | null;
  windowStart: number;
  windowUsage: number;
  /** reservation rows (PostgreSQL's, or an older version's), not holds */
  reserved: number;
}

/**
 * An account's and a key's credit as the SQLite engine had committed it, for the holds the main thread makes
 * (src/store/local-credit.ts).
 */
export interface CommittedCredit {
  /** The engine's order of its readings: a larger number was read later. */
  seq: number;
  /** PRAGMA data_version of the engine's connection: it moves when another process commits to the file. */
  version: number;
  /** The engine's HoldBook (a new one after its worker thread died). */
  book: string;
  accountId: string;
  /** credits - usage - reserved rows; null: there is no such account */
  account: number | null;
  keyHash: string | null;
  /** null: no key, or no such key */
  key: KeyCredit | null;
}

/** An account's free credit, as a column list (SELECT or RETURNING). */
const ACCOUNT_FREE = 'credits - usage - reserved AS free';
/** What a key's credit follows from, as a column list (SELECT or RETURNING). */
const KEY_CREDIT = 'credit_limit, limit_reset, window_start, window_usage, reserved';
type AccountRow = { free: unknown };
type KeyRow = {
  credit_limit: unknown;
  limit_reset: LimitReset | null;
  window_start: unknown;
  window_usage: unknown;
  reserved: unknown;
};

function* readCommitted(
  accountId: string,
  keyHash: string | null,
  holds: HoldBook,
): Generator<Step, CommittedCredit, unknown> {
  const a = yield* get<AccountRow>(`SELECT ${ACCOUNT_FREE} FROM accounts WHERE id = ?`, [accountId]);
  const k = keyHash ? yield* get<KeyRow>(`SELECT ${KEY_CREDIT} FROM api_keys WHERE hash = ?`, [keyHash]) : undefined;
  return yield* committed(accountId, keyHash, a, k, holds);
}

/** The engine's reading of an account's and a key's credit from their rows as it has them now. */
function* committed(
  accountId: string,
  keyHash: string | null,
  a: AccountRow | undefined,
  k: KeyRow | undefined,
  holds: HoldBook,
): Generator<Step, CommittedCredit, unknown> {
  holds.dataVersion ??= num((yield* get<{ data_version: unknown }>('PRAGMA data_version'))?.data_version);
  return {
    seq: holds.tick(),
    version: holds.dataVersion,
    book: holds.id,
    accountId,
    account: a ? num(a.free) : null,
    keyHash,
    key: k
      ? {
          limit: numOrNull(k.credit_limit),
          reset: k.limit_reset,
          windowStart: num(k.window_start),
          windowUsage: num(k.window_usage),
          reserved: num(k.reserved),
        }
      : null,
  };
}

/** Read an account's and a key's committed credit (SQLite engine only): the main thread decides on its holds. */
export const committedProc: Proc<{ accountId: string; keyHash: string | null }, CommittedCredit> = {
  name: 'credit.committed',
  readOnly: true,
  *body({ accountId, keyHash }, holds) {
    if (!holds) throw new Error('credit.committed runs in the SQLite engine only');
    return yield* readCommitted(accountId, keyHash, holds);
  },
};

/**
 * Enter a hold the main thread made into the engine's book, unchecked (the main thread checked it): SQL reads it as
 * `gw_held`, and the settlement takes it off.
 */
export const noteHoldProc: Proc<Hold, null> = {
  name: 'credit.note-hold',
  readOnly: true,
  wire: holdWire,
  // eslint-disable-next-line require-yield
  *body(h, holds) {
    if (!holds) throw new Error('credit.note-hold runs in the SQLite engine only');
    holds.hold(h);
    return null;
  },
};

export interface SettleArgs {
  reservationId: string;
  /** What the answer's usage costs (nano-credits); charged up to the reservation, the rest is an overrun. */
  charge: number;
  generation: Generation | null;
  overrun: Overrun | null;
  now: number;
  /** Writes of the same request committed in this transaction (e.g. its stored response); idempotent upserts. */
  writes: PendingWrite[];
  /** The hold as the main thread made it, and in which book: charged from here if that book is gone. */
  made: (Hold & { book: string }) | null;
}

/**
 * Charge a held reservation's key: the window's reset (when it rolled over since the hold was made) and the charge in
 * one statement. Params: window starts x3 (at the hold's time) twice, then x3 again, cost, cost, hash.
 */
const KEY_CHARGE_HELD = `UPDATE api_keys
  SET window_start = CASE WHEN ${ROLLED} THEN ${WINDOW_START} ELSE window_start END,
  window_usage = ${WINDOW_USAGE} + ?, usage = usage + ? WHERE hash = ? RETURNING ${KEY_CREDIT}`;

/**
 * A reservation as the settlement finds it: a hold of the SQLite engine, or a row (PostgreSQL, or left by an older
 * version).
 */
interface Reserved {
  accountId: string;
  keyHash: string | null;
  amount: number;
  /**
   * When it was made (a hold's), for the key's limit window; null for a row (its window was reset when it was made).
   */
  at: number | null;
}

function* takeReservation(
  id: string,
  holds: HoldBook | undefined,
  made: SettleArgs['made'],
): Generator<Step, Reserved | undefined, unknown> {
  // A hold of a worker thread that died went with it: the request is charged all the same.
  const h = holds?.release(id) ?? (holds && made && made.book !== holds.id ? made : undefined);
  if (h) return { accountId: h.accountId, keyHash: h.keyHash, amount: h.amount, at: h.createdAt };
  const r = yield* get<{ account_id: string; key_hash: string | null; amount: unknown }>(
    'DELETE FROM credit_reservations WHERE id = ? RETURNING account_id, key_hash, amount',
    [id],
  );
  return r && { accountId: r.account_id, keyHash: r.key_hash, amount: num(r.amount), at: null };
}

export interface SettleResult {
  /** false: it had been settled before */
  settled: boolean;
  /** On SQLite, the account's and key's credit as this settlement leaves it. */
  committed: CommittedCredit | null;
}

/** Release a reservation, charge the cost (ledger row) and write the generation record. */
export const settleProc: Proc<SettleArgs, SettleResult> = {
  name: 'credit.settle',
  idempotent: true, // the reservation is gone after the first
  reportsCredit: true,
  wire: settleWire,
  *body({ reservationId, charge, generation, overrun, now, writes, made }, holds) {
    for (const w of writes) yield* run(w.sql, w.params);
    const r = yield* takeReservation(reservationId, holds, made);
    if (!r) return { settled: false, committed: null };
    const reserved = r.amount;
    // The last line of defence: nothing is charged beyond what was reserved (the rest is an overrun).
    const valid = Number.isSafeInteger(charge) && charge >= 0;
    const cost = valid ? Math.min(charge, reserved) : reserved;
    const excess = (overrun?.amount ?? 0) + (valid ? charge - cost : 0);
    const reason = overrun?.reason ?? (valid ? (excess > 0 ? 'usage_above_bound' : null) : 'malformed_usage');
    // A hold is not in the reserved columns (a row is).
    const unreserve = r.at === null ? reserved : 0;
    // Each update returns what it leaves (the engine reports it to the main thread without reading it again).
    const account = yield* get<AccountRow>(
      'UPDATE accounts SET reserved = reserved - ?, usage = usage + ?, updated_at = ? ' +
        `WHERE id = ? RETURNING ${ACCOUNT_FREE}`,
      [unreserve, cost, now, r.accountId],
    );
    let key: KeyRow | undefined;
    if (r.keyHash && r.at !== null) {
      const ws = windowStarts(r.at);
      key = yield* get<KeyRow>(KEY_CHARGE_HELD, [...ws, ...ws, ...ws, cost, cost, r.keyHash]);
    } else if (r.keyHash)
      key = yield* get<KeyRow>(
        'UPDATE api_keys SET reserved = reserved - ?, usage = usage + ?, window_usage = window_usage + ? ' +
          `WHERE hash = ? RETURNING ${KEY_CREDIT}`,
        [unreserve, cost, cost, r.keyHash],
      );
    if (cost !== 0) {
      yield* run(
        'INSERT INTO credit_ledger (id, account_id, key_hash, generation_id, kind, amount, created_at) ' +
          'VALUES (?, ?, ?, ?, ?, ?, ?)',
        [orderedId('led_'), r.accountId, r.keyHash, generation?.id ?? null, 'charge', cost, now],
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
    return { settled: true, committed: holds ? yield* committed(r.accountId, r.keyHash, account, key, holds) : null };
  },
};

/** The holds made before `before` (ms): a request whose settlement failed left them. */
export const staleHoldsProc: Proc<{ before: number }, string[]> = {
  name: 'credit.stale-holds',
  readOnly: true,
  // eslint-disable-next-line require-yield
  *body({ before }, holds) {
    return holds?.olderThan(before) ?? [];
  },
};

/** How many holds there are (of one account, or all). */
export const countHoldsProc: Proc<{ accountId?: string }, number> = {
  name: 'credit.count-holds',
  readOnly: true,
  // eslint-disable-next-line require-yield
  *body({ accountId }, holds) {
    return holds?.count(accountId) ?? 0;
  },
};
