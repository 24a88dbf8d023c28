import * as door from '../../../src/plugin/procedures';
import type { Hold, HoldBook, LimitReset, Proc, Step } from '../../../src/plugin/procedures';
import { holdWire } from './wire';

// Read once, at load: a name the door re-exports is a getter, and these are called for every request.
const { get, num, numOrNull, Rollback, run, windowStart } = door;

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
export const WINDOW_START =
  "CASE limit_reset WHEN 'daily' THEN CAST(? AS BIGINT) WHEN 'weekly' THEN CAST(? AS BIGINT) " +
  'ELSE CAST(? AS BIGINT) END';
/** The key's window has rolled over: its usage so far belongs to a past window (params: as WINDOW_START). */
export const ROLLED = `(limit_reset IS NOT NULL AND window_start < ${WINDOW_START})`;
/** The key's usage in its current window (params: as WINDOW_START). */
export const WINDOW_USAGE = `CASE WHEN ${ROLLED} THEN 0 ELSE window_usage END`;
/**
 * Reserve against the key's limit, in its current window: a window that has rolled over restarts from zero in the
 * same statement (every right-hand side reads the row as it was). Params: window starts x3, amount, hash, window
 * starts, amount.
 */
const KEY_RESERVE = `UPDATE api_keys SET window_usage = ${WINDOW_USAGE},
  window_start = CASE WHEN ${ROLLED} THEN ${WINDOW_START} ELSE window_start END, reserved = reserved + ?
  WHERE hash = ? AND (credit_limit IS NULL OR credit_limit - ${WINDOW_USAGE} - reserved >= ?)`;

/** The daily, weekly and monthly window starts at `now`, as WINDOW_START takes them. */
export function windowStarts(now: number): [number, number, number] {
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
 * (./local-credit.ts).
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
export const ACCOUNT_FREE = 'credits - usage - reserved AS free';
/** What a key's credit follows from, as a column list (SELECT or RETURNING). */
export const KEY_CREDIT = 'credit_limit, limit_reset, window_start, window_usage, reserved';
export type AccountRow = { free: unknown };
export type KeyRow = {
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
export function* committed(
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
