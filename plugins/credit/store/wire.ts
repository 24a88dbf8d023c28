/**
 * The credit procedures' arguments as arrays (Proc.wire): what the main thread sends the SQLite worker for every
 * request (a hold, then its settlement), and what the redo log keeps of them.
 */
import * as door from '../../../src/plugin/procedures';
import type { Generation, Hold, Param, ProcWire, Sql } from '../../../src/plugin/procedures';
import type { SettleArgs } from './settle';

// Read once, at load: a name the door re-exports is a getter, and these are called for every request.
const { madeHold, scalarExact } = door;

/** A Generation as an array, in the order of its fields (for the SQLite worker's messages and redo log). */
type PackedGeneration = [
  id: string,
  accountId: string,
  keyHash: string | null,
  model: string,
  provider: string | null,
  deployment: string | null,
  promptTokens: number,
  completionTokens: number,
  cachedTokens: number,
  cacheWriteTokens: number,
  reasoningTokens: number,
  cost: number,
  latencyMs: number | null,
  ttftMs: number | null,
  finishReason: string | null,
  streamed: boolean,
  cancelled: boolean,
  status: Generation['status'],
  errorCode: string | null,
  appReferer: string | null,
  appTitle: string | null,
  user: string | null,
  metadata: Record<string, unknown> | null,
  createdAt: number,
  attempts: string | null,
  cache: Generation['cache'] | null,
  cacheEntry: string | null,
  cacheSimilarity: number | null,
  variant: string | null,
  insured: boolean,
  guardrails: string | null,
];

function packGeneration(g: Generation): PackedGeneration {
  return [
    g.id,
    g.accountId,
    g.keyHash,
    g.model,
    g.provider,
    g.deployment,
    g.promptTokens,
    g.completionTokens,
    g.cachedTokens,
    g.cacheWriteTokens,
    g.reasoningTokens,
    g.cost,
    g.latencyMs,
    g.ttftMs,
    g.finishReason,
    g.streamed,
    g.cancelled,
    g.status,
    g.errorCode,
    g.appReferer,
    g.appTitle,
    g.user,
    g.metadata,
    g.createdAt,
    g.attempts ?? null,
    g.cache ?? null,
    g.cacheEntry ?? null,
    g.cacheSimilarity ?? null,
    g.variant ?? null,
    g.insured === true,
    g.guardrails ?? null,
  ];
}

function unpackGeneration(p: PackedGeneration): Generation {
  return {
    id: p[0],
    accountId: p[1],
    keyHash: p[2],
    model: p[3],
    provider: p[4],
    deployment: p[5],
    promptTokens: p[6],
    completionTokens: p[7],
    cachedTokens: p[8],
    cacheWriteTokens: p[9],
    reasoningTokens: p[10],
    cost: p[11],
    latencyMs: p[12],
    ttftMs: p[13],
    finishReason: p[14],
    streamed: p[15],
    cancelled: p[16],
    status: p[17],
    errorCode: p[18],
    appReferer: p[19],
    appTitle: p[20],
    user: p[21],
    metadata: p[22],
    createdAt: p[23],
    attempts: p[24] ?? null,
    cache: p[25] ?? null,
    cacheEntry: p[26] ?? null,
    cacheSimilarity: p[27] ?? null,
    variant: p[28] ?? null,
    insured: p[29] === true,
    guardrails: p[30] ?? null,
  };
}

type PackedHold = [id: string, accountId: string, keyHash: string | null, amount: number, createdAt: number];

type PackedSettle = [
  reservationId: string,
  charge: number,
  generation: PackedGeneration | null,
  overrun: [amount: number, reason: string] | null,
  now: number,
  writes: Array<[sql: Sql, params: Param[]] | [sql: Sql, params: Param[], jsonAt: number, json: unknown]>,
  made: [hold: PackedHold, book: string] | null,
];

function packHold(h: Hold): PackedHold {
  return [h.id, h.accountId, h.keyHash, h.amount, h.createdAt];
}

function unpackHold([id, accountId, keyHash, amount, createdAt]: PackedHold): Hold {
  return { id, accountId, keyHash, amount, createdAt };
}

export const holdWire: ProcWire<Hold> = { pack: packHold, unpack: (packed) => unpackHold(packed as PackedHold) };

/** Metadata as credit lets it through (plugins/credit/metadata.ts): null, or a plain object of strings. */
function metadataExact(m: unknown): boolean {
  if (m === null) return true;
  if (typeof m !== 'object' || Object.getPrototypeOf(m) !== Object.prototype) return false;
  const o = m as Record<string, unknown>;
  for (const k in o) if (typeof o[k] !== 'string') return false;
  return true;
}

function scalarsExact(values: readonly unknown[]): boolean {
  for (let i = 0; i < values.length; i++) if (!scalarExact(values[i])) return false;
  return true;
}

/**
 * A packed write JSON carries exactly. Its JSON value is left unwalked: what the write reads of it is its JSON text
 * (writeParams), and JSON.parse then JSON.stringify gives that text back as it was (a value that does not serialize
 * throws from the settlement's own stringify, and the record then takes the general path).
 */
function writeExact(w: PackedSettle[5][number]): boolean {
  if (typeof w[0] !== 'string' || !scalarsExact(w[1])) return false;
  if (w.length === 2) return true;
  const value = w[3] as { toJSON?: unknown } | null;
  return scalarExact(w[2]) && typeof value === 'object' && value !== null && typeof value.toJSON !== 'function';
}

/**
 * The settlement's JSON text, or null for redo-codec's general check: the fields are scalars bar the metadata (a
 * plain object of strings) and the writes' JSON values, so the check that JSON gives the worker back what it was
 * sent is a loop over scalars, not redo-codec's general walk (why: docs/decisions/0032).
 */
function settleJson(packed: unknown[]): string | null {
  const [reservationId, charge, generation, overrun, now, writes, made] = packed as PackedSettle;
  if (!scalarExact(reservationId) || !scalarExact(charge) || !scalarExact(now)) return null;
  if (generation !== null) for (const v of generation) if (!scalarExact(v) && !metadataExact(v)) return null;
  if (overrun !== null && !scalarsExact(overrun)) return null;
  for (const w of writes) if (!writeExact(w)) return null;
  if (made !== null && !(scalarsExact(made[0]) && scalarExact(made[1]))) return null;
  try {
    return JSON.stringify(packed);
  } catch {
    return null; // a JSON value that does not serialize (a cycle, a bigint)
  }
}

export const settleWire: ProcWire<SettleArgs> = {
  json: settleJson,
  pack({ reservationId, charge, generation, overrun, now, writes, made }): PackedSettle {
    return [
      reservationId,
      charge,
      generation && packGeneration(generation),
      overrun && [overrun.amount, overrun.reason],
      now,
      writes.map((w) => (w.json ? [w.sql, w.params, w.json.at, w.json.value] : [w.sql, w.params])),
      made && [packHold(made), made.book],
    ];
  },
  unpack(packed) {
    const [reservationId, charge, generation, overrun, now, writes, made] = packed as PackedSettle;
    return {
      reservationId,
      charge,
      generation: generation && unpackGeneration(generation),
      overrun: overrun && { amount: overrun[0], reason: overrun[1] },
      now,
      writes: writes.map(([sql, params, at, value]) =>
        at === undefined ? { sql, params } : { sql, params, json: { at, value } },
      ),
      made: made && madeHold(unpackHold(made[0]), made[1]),
    };
  },
};
