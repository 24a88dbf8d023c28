import * as door from '../../../src/plugin/procedures';
import type { Generation, HoldBook, MadeHold, Param, PendingWrite, Proc, Step } from '../../../src/plugin/procedures';
import { settleWire } from './wire';
import {
  ACCOUNT_FREE,
  committed,
  KEY_CREDIT,
  ROLLED,
  WINDOW_START,
  WINDOW_USAGE,
  windowStarts,
  type AccountRow,
  type CommittedCredit,
  type KeyRow,
  type Overrun,
} from './reserve';

// Read once, at load: a name the door re-exports is a getter, and these are called for every request.
const { GENERATION_COLUMNS, generationParams, get, insertRows, num, orderedId, run, writeParams } = door;

/**
 * Settling a credit reservation (see ./reserve.ts for reserving): release it, charge the real cost (a ledger row) and
 * write the generation record, in one transaction; several settlements of a group commit in one pass.
 */
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
  made: MadeHold | null;
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
export interface Reserved {
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
  /** On SQLite, the account's and key's credit as this settlement (or the last of those settled with it) leaves it. */
  committed: CommittedCredit | null;
}

/** A settlement whose reservation was taken: what it charges, and what it records beyond that (an overrun). */
export interface Charge {
  args: SettleArgs;
  r: Reserved;
  cost: number;
  excess: number;
  reason: string | null;
}

export function charged(args: SettleArgs, r: Reserved): Charge {
  const { charge, overrun } = args;
  // The last line of defence: nothing is charged beyond what was reserved (the rest is an overrun).
  const valid = Number.isSafeInteger(charge) && charge >= 0;
  const cost = valid ? Math.min(charge, r.amount) : r.amount;
  const excess = (overrun?.amount ?? 0) + (valid ? charge - cost : 0);
  const reason = overrun?.reason ?? (valid ? (excess > 0 ? 'usage_above_bound' : null) : 'malformed_usage');
  return { args, r, cost, excess, reason };
}

/** What a reservation row (not a hold) still has in the reserved columns: the settlement takes it out. */
const unreserved = (c: Charge) => (c.r.at === null ? c.r.amount : 0);

/**
 * Charges of one key that one statement applies: consecutive ones (in the order they settle) of held reservations
 * made in the same limit window, or of reservation rows. Applying each in turn or their sum at once leaves the same
 * row: after the first, the window has been reset if it had to be, and the rest only add.
 */
interface KeyRun {
  hash: string;
  /** the window starts of the holds' time; null: reservation rows */
  ws: [number, number, number] | null;
  unreserve: number;
  cost: number;
}

function* chargeKey(k: KeyRun): Generator<Step, KeyRow | undefined, unknown> {
  if (k.ws) return yield* get<KeyRow>(KEY_CHARGE_HELD, [...k.ws, ...k.ws, ...k.ws, k.cost, k.cost, k.hash]);
  return yield* get<KeyRow>(
    'UPDATE api_keys SET reserved = reserved - ?, usage = usage + ?, window_usage = window_usage + ? ' +
      `WHERE hash = ? RETURNING ${KEY_CREDIT}`,
    [k.unreserve, k.cost, k.cost, k.hash],
  );
}

/** The key runs of `charges`, in order. */
export function keyRuns(charges: readonly Charge[]): KeyRun[] {
  const runs: KeyRun[] = [];
  const last = new Map<string, KeyRun>();
  for (const c of charges) {
    const hash = c.r.keyHash;
    if (hash === null) continue;
    const ws = c.r.at === null ? null : windowStarts(c.r.at);
    const open = last.get(hash);
    if (open && (open.ws === null ? ws === null : ws !== null && ws.every((v, i) => v === open.ws![i]))) {
      open.unreserve += unreserved(c);
      open.cost += c.cost;
      continue;
    }
    const run: KeyRun = { hash, ws, unreserve: unreserved(c), cost: c.cost };
    runs.push(run);
    last.set(hash, run);
  }
  return runs;
}

/** The ledger's columns, as a settlement's charge row gives them. */
export const LEDGER_COLUMNS = [
  'id',
  'account_id',
  'key_hash',
  'generation_id',
  'kind',
  'amount',
  'created_at',
] as const;
/** A generation record's columns with its overrun (0 and null when there is none). */
export const RECORD_COLUMNS = [...GENERATION_COLUMNS, 'overrun', 'overrun_reason'] as const;

/** The ledger rows of settled charges: zero-completion insurance leaves a row of nothing charged, saying why. */
export function ledgerRows(done: readonly Charge[]): Param[][] {
  return done
    .filter((c) => c.cost !== 0 || c.args.generation?.insured === true)
    .map((c) => [
      orderedId('led_'),
      c.r.accountId,
      c.r.keyHash,
      c.args.generation?.id ?? null,
      c.cost === 0 ? 'insured' : 'charge',
      c.cost,
      c.args.now,
    ]);
}

/** The generation records of settled charges (RECORD_COLUMNS), each at its cost, with its overrun. */
export function recordRows(done: readonly Charge[]): Param[][] {
  const records: Param[][] = [];
  for (const c of done) {
    if (!c.args.generation) continue;
    const overrun = c.reason === null ? 0 : Math.min(c.excess, Number.MAX_SAFE_INTEGER);
    records.push([...generationParams({ ...c.args.generation, cost: c.cost }), overrun, c.reason]);
  }
  return records;
}

/**
 * Settle several reservations at once: their stored writes, then each reservation taken and its charge worked out,
 * then one balance update per account and per key run (not per settlement), and the ledger rows and generation
 * records in multi-row INSERTs. Every balance update returns what it leaves, which each settlement of that account
 * or key reports (the main thread counts a settlement's hold until it sees its answer, so a balance that already
 * includes a later settlement's charge only makes it count that charge twice for a moment, never too little).
 */
function* settleMany(all: readonly SettleArgs[], holds?: HoldBook): Generator<Step, SettleResult[], unknown> {
  for (const a of all)
    for (const w of a.writes) {
      const params = writeParams(w);
      if (params) yield* run(w.sql, params);
    }
  const charges: Array<Charge | null> = [];
  for (const a of all) {
    const r = yield* takeReservation(a.reservationId, holds, a.made);
    charges.push(r ? charged(a, r) : null);
  }
  const done = charges.filter((c): c is Charge => c !== null);
  const accountDeltas = new Map<string, { unreserve: number; cost: number; now: number }>();
  for (const c of done) {
    const d = accountDeltas.get(c.r.accountId);
    if (d) {
      d.unreserve += unreserved(c);
      d.cost += c.cost;
      d.now = c.args.now;
    } else accountDeltas.set(c.r.accountId, { unreserve: unreserved(c), cost: c.cost, now: c.args.now });
  }
  const accounts = new Map<string, AccountRow | undefined>();
  for (const [id, d] of accountDeltas)
    accounts.set(
      id,
      yield* get<AccountRow>(
        'UPDATE accounts SET reserved = reserved - ?, usage = usage + ?, updated_at = ? ' +
          `WHERE id = ? RETURNING ${ACCOUNT_FREE}`,
        [d.unreserve, d.cost, d.now, id],
      ),
    );
  const keys = new Map<string, KeyRow | undefined>();
  for (const k of keyRuns(done)) keys.set(k.hash, yield* chargeKey(k));
  yield* insertRows('credit_ledger', LEDGER_COLUMNS, ledgerRows(done));
  yield* insertRows('generations', RECORD_COLUMNS, recordRows(done));
  const out: SettleResult[] = [];
  for (const c of charges) {
    if (!c) out.push({ settled: false, committed: null });
    else {
      const { accountId, keyHash } = c.r;
      const key = keyHash === null ? undefined : keys.get(keyHash);
      const reading = holds ? yield* committed(accountId, keyHash, accounts.get(accountId), key, holds) : null;
      out.push({ settled: true, committed: reading });
    }
  }
  return out;
}

/** Release a reservation, charge the cost (ledger row) and write the generation record. */
export const settleProc: Proc<SettleArgs, SettleResult> = {
  name: 'credit.settle',
  idempotent: true, // the reservation is gone after the first
  reportsCredit: true,
  wire: settleWire,
  *body(args, holds) {
    return (yield* settleMany([args], holds))[0];
  },
  many: settleMany,
};
