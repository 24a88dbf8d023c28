import { randomId } from '../ids';
import type { Db } from './db';
import { windowStart } from './keys';
import { GENERATION_INSERT, generationParams, type Generation } from './generations';
import { num } from './money';

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
export class CreditRepo {
  constructor(private readonly db: Db) {}

  async reserve(accountId: string, keyHash: string | null, amount: number, now = Date.now()): Promise<ReserveResult> {
    const id = randomId('rsv_');
    return this.db
      .tx(async (t) => {
        const a = await t.run('UPDATE accounts SET reserved = reserved + ? WHERE id = ? AND credits - usage - reserved >= ?', [amount, accountId, amount]);
        if (a.changes === 0) {
          const row = await t.get<{ free: unknown }>('SELECT credits - usage - reserved AS free FROM accounts WHERE id = ?', [accountId]);
          throw new Refused('account', num(row?.free));
        }
        if (keyHash) {
          const ws = [windowStart('daily', now), windowStart('weekly', now), windowStart('monthly', now)];
          // A key whose limit window has rolled over starts the new window from zero.
          await t.run(
            "UPDATE api_keys SET window_usage = 0, window_start = CASE limit_reset WHEN 'daily' THEN CAST(? AS BIGINT) WHEN 'weekly' THEN CAST(? AS BIGINT) ELSE CAST(? AS BIGINT) END WHERE hash = ? AND limit_reset IS NOT NULL AND window_start < CASE limit_reset WHEN 'daily' THEN CAST(? AS BIGINT) WHEN 'weekly' THEN CAST(? AS BIGINT) ELSE CAST(? AS BIGINT) END",
            [...ws, keyHash, ...ws],
          );
          const k = await t.run('UPDATE api_keys SET reserved = reserved + ? WHERE hash = ? AND (credit_limit IS NULL OR credit_limit - window_usage - reserved >= ?)', [amount, keyHash, amount]);
          if (k.changes === 0) {
            const row = await t.get<{ free: unknown }>('SELECT credit_limit - window_usage - reserved AS free FROM api_keys WHERE hash = ?', [keyHash]);
            throw new Refused('key', num(row?.free));
          }
        }
        await t.run('INSERT INTO credit_reservations (id, account_id, key_hash, amount, created_at) VALUES (?, ?, ?, ?, ?)', [id, accountId, keyHash, amount, now]);
        return { ok: true as const, id };
      })
      .catch((e: unknown) => {
        if (e instanceof Refused) return { ok: false as const, limit: e.limit, available: Math.max(0, e.available) };
        throw e;
      });
  }

  /**
   * Release the reservation and charge `charge` (nano-credits, at most the reservation; any
   * excess is recorded as an overrun), writing the ledger entry and the generation record in
   * the same transaction. Settling twice charges once.
   */
  async settle(reservationId: string, charge: number, generation: Generation | null, overrun: Overrun | null = null): Promise<boolean> {
    return this.db.tx(async (t) => {
      const r = await t.get<{ account_id: string; key_hash: string | null; amount: unknown }>('SELECT account_id, key_hash, amount FROM credit_reservations WHERE id = ?', [reservationId]);
      if (!r) return false;
      const reserved = num(r.amount);
      // The last line of defence: nothing is charged beyond what was reserved (the rest is an overrun).
      const valid = Number.isSafeInteger(charge) && charge >= 0;
      const cost = valid ? Math.min(charge, reserved) : reserved;
      const excess = (overrun?.amount ?? 0) + (valid ? charge - cost : 0);
      const reason = overrun?.reason ?? (valid ? (excess > 0 ? 'usage_above_bound' : null) : 'malformed_usage');
      await t.run('DELETE FROM credit_reservations WHERE id = ?', [reservationId]);
      await t.run('UPDATE accounts SET reserved = reserved - ?, usage = usage + ?, updated_at = ? WHERE id = ?', [reserved, cost, Date.now(), r.account_id]);
      if (r.key_hash) await t.run('UPDATE api_keys SET reserved = reserved - ?, usage = usage + ?, window_usage = window_usage + ? WHERE hash = ?', [reserved, cost, cost, r.key_hash]);
      if (cost !== 0) {
        await t.run('INSERT INTO credit_ledger (id, account_id, key_hash, generation_id, kind, amount, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)', [
          randomId('led_'), r.account_id, r.key_hash, generation?.id ?? null, 'charge', cost, Date.now(),
        ]);
      }
      if (generation) {
        await t.run(GENERATION_INSERT, generationParams({ ...generation, cost }));
        if (reason !== null) await t.run('UPDATE generations SET overrun = ?, overrun_reason = ? WHERE id = ?', [Math.min(excess, Number.MAX_SAFE_INTEGER), reason, generation.id]);
      }
      return true;
    });
  }

  /** The overrun recorded on a generation (nano-credits beyond its reservation, and why), if any. */
  async overrun(generationId: string): Promise<Overrun | null> {
    const r = await this.db.get<{ overrun: unknown; overrun_reason: string | null }>('SELECT overrun, overrun_reason FROM generations WHERE id = ?', [generationId]);
    return r && r.overrun_reason ? { amount: num(r.overrun), reason: r.overrun_reason } : null;
  }

  /** Release reservations older than `olderThanMs` (left by a crashed process); returns how many. */
  async releaseStale(olderThanMs: number, now = Date.now()): Promise<number> {
    const stale = await this.db.all<{ id: string }>('SELECT id FROM credit_reservations WHERE created_at <= ?', [now - olderThanMs]);
    let n = 0;
    for (const s of stale) if (await this.settle(s.id, 0, null)) n++;
    return n;
  }

  async ledgerSum(accountId: string): Promise<number> {
    const r = await this.db.get<{ s: unknown }>('SELECT COALESCE(SUM(amount), 0) AS s FROM credit_ledger WHERE account_id = ?', [accountId]);
    return num(r?.s);
  }

  async openReservations(accountId?: string): Promise<number> {
    const r = accountId
      ? await this.db.get<{ n: unknown }>('SELECT COUNT(*) AS n FROM credit_reservations WHERE account_id = ?', [accountId])
      : await this.db.get<{ n: unknown }>('SELECT COUNT(*) AS n FROM credit_reservations');
    return num(r?.n);
  }
}

class Refused extends Error {
  constructor(readonly limit: 'account' | 'key', readonly available: number) {
    super('refused');
  }
}
