import * as door from '../../../src/plugin/procedures';
import type { Db } from '../../../src/plugin';
import type { Param, Step } from '../../../src/plugin/procedures';
import { charged, keyRuns, LEDGER_COLUMNS, ledgerRows, recordRows, RECORD_COLUMNS, type SettleArgs } from './settle';
import type { SettleResult } from './settle';

// Read once, at load: a name the door re-exports is a getter, and these are called for every request.
const { num, writeParams } = door;

/** A store that sends a transaction as messages of several statements (PostgreSQL's Db.rounds). */
export type RoundsDb = Db & Required<Pick<Db, 'rounds'>>;
type Statement = Pick<Step, 'sql' | 'params'>;

/**
 * `rows` into `table` as one statement (none when there are no rows): its parameters go into the text, so a text per
 * number of rows costs nothing, and the generations trigger then runs once for the whole batch.
 */
function insertAll(table: string, columns: readonly string[], rows: readonly Param[][]): Statement[] {
  if (rows.length === 0) return [];
  const row = `(${columns.map(() => '?').join(', ')})`;
  const params: Param[] = [];
  for (const r of rows) for (const p of r) params.push(p);
  const sql = `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${Array<string>(rows.length).fill(row).join(', ')}`;
  return [{ sql, params }];
}

/**
 * Settle reservation rows (PostgreSQL) as ./settle.ts does, in two messages: the first takes the reservations (rows
 * no other request locks) and runs the requests' stored writes; the second writes the ledger rows and generation
 * records (whose trigger adds them to the console's aggregates), then charges the accounts and keys in the order of
 * their ids, and commits. The rows every request shares are locked for that one round trip, the accounts' and keys'
 * (which every reservation waits for) only from their updates to the commit; every batch and reservation locks
 * aggregates, then accounts, then keys, each in one order, so that none waits on another in a circle.
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

/** The ledger rows and the generation records, then the accounts' and keys' updates (in the order of their ids). */
function chargeStatements(done: ReadonlyArray<ReturnType<typeof charged>>): Statement[] {
  const out: Statement[] = [
    ...insertAll('credit_ledger', LEDGER_COLUMNS, ledgerRows(done)),
    ...insertAll('generations', RECORD_COLUMNS, recordRows(done)),
  ];
  const accounts = new Map<string, { unreserve: number; cost: number; now: number }>();
  for (const c of done) {
    const d = accounts.get(c.r.accountId) ?? { unreserve: 0, cost: 0, now: 0 };
    d.unreserve += c.r.amount;
    d.cost += c.cost;
    d.now = c.args.now;
    accounts.set(c.r.accountId, d);
  }
  for (const [id, d] of [...accounts].sort(([a], [b]) => (a < b ? -1 : 1)))
    out.push({
      sql: 'UPDATE accounts SET reserved = reserved - ?, usage = usage + ?, updated_at = ? WHERE id = ?',
      params: [d.unreserve, d.cost, d.now, id],
    });
  for (const k of keyRuns(done).sort((a, b) => (a.hash < b.hash ? -1 : 1)))
    out.push({
      sql: 'UPDATE api_keys SET reserved = reserved - ?, usage = usage + ?, window_usage = window_usage + ? WHERE hash = ?',
      params: [k.unreserve, k.cost, k.cost, k.hash],
    });
  return out;
}
