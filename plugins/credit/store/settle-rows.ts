import * as door from '../../../src/plugin/procedures';
import type { Db } from '../../../src/plugin';
import type { Param, Step } from '../../../src/plugin/procedures';
import { charged, keyRuns, LEDGER_COLUMNS, ledgerRows, recordRows, RECORD_COLUMNS, type SettleArgs } from './settle';
import type { SettleResult } from './settle';

// Read once, at load: a name the door re-exports is a getter, and these are called for every request.
const { insertRows, num, writeParams } = door;

/** A store that sends a transaction as messages of several statements (PostgreSQL's Db.rounds). */
export type RoundsDb = Db & Required<Pick<Db, 'rounds'>>;
type Statement = Pick<Step, 'sql' | 'params'>;

/** The statements of a generator that reads none of their results (insertRows). */
function statementsOf(gen: Generator<Step, void, unknown>): Statement[] {
  const out: Statement[] = [];
  for (let s = gen.next(); !s.done; s = gen.next({ changes: 0 })) out.push(s.value);
  return out;
}

/**
 * Settle reservation rows (PostgreSQL) as ./settle.ts does, in two messages: the first takes the reservations (rows
 * no other request locks) and runs the requests' stored writes; the second charges the accounts and keys, in the
 * order of their ids (so that batches of several processes never wait on each other in a circle), writes the ledger
 * rows and generation records, and commits. The rows every request shares are locked for that one round trip.
 * Reservation ids must differ (a second settlement of one reservation waits for the next batch).
 */
export async function settleRows(db: RoundsDb, all: readonly SettleArgs[]): Promise<SettleResult[]> {
  return db.rounds(async (send) => {
    const writes: Statement[] = [];
    for (const a of all)
      for (const w of a.writes) {
        const params = writeParams(w);
        if (params) writes.push({ sql: w.sql, params });
      }
    const ids = all.map((a) => a.reservationId);
    const take = {
      sql: `DELETE FROM credit_reservations WHERE id IN (${ids.map(() => '?').join(', ')}) RETURNING id, account_id, key_hash, amount`,
      params: ids,
    };
    const [taken] = await send([take, ...writes]);
    const rows = new Map(taken.map((r) => [r.id as string, r]));
    const charges = all.map((a) => {
      const r = rows.get(a.reservationId);
      if (!r) return null;
      const reserved = { accountId: r.account_id as string, keyHash: r.key_hash as string | null, at: null };
      return charged(a, { ...reserved, amount: num(r.amount) });
    });
    const done = charges.filter((c) => c !== null);
    if (done.length > 0) await send(chargeStatements(done), true);
    return charges.map((c) => ({ settled: c !== null, committed: null }));
  }, true);
}

/** The accounts' and keys' updates (in the order of their ids), the ledger rows and the generation records. */
function chargeStatements(done: ReadonlyArray<ReturnType<typeof charged>>): Statement[] {
  const accounts = new Map<string, { unreserve: number; cost: number; now: number }>();
  for (const c of done) {
    const d = accounts.get(c.r.accountId) ?? { unreserve: 0, cost: 0, now: 0 };
    d.unreserve += c.r.amount;
    d.cost += c.cost;
    d.now = c.args.now;
    accounts.set(c.r.accountId, d);
  }
  const out: Statement[] = [...accounts]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([id, d]) => ({
      sql: 'UPDATE accounts SET reserved = reserved - ?, usage = usage + ?, updated_at = ? WHERE id = ?',
      params: [d.unreserve, d.cost, d.now, id],
    }));
  for (const k of keyRuns(done).sort((a, b) => (a.hash < b.hash ? -1 : 1)))
    out.push({
      sql: 'UPDATE api_keys SET reserved = reserved - ?, usage = usage + ?, window_usage = window_usage + ? WHERE hash = ?',
      params: [k.unreserve, k.cost, k.cost, k.hash],
    });
  out.push(...statementsOf(insertRows('credit_ledger', LEDGER_COLUMNS, ledgerRows(done))));
  const records: Param[][] = recordRows(done);
  out.push(...statementsOf(insertRows('generations', RECORD_COLUMNS, records)));
  return out;
}
