/**
 * The credit procedures' arguments as arrays (Proc.wire): what the main thread sends the SQLite worker for every
 * request (a hold, then its settlement), and what the redo log keeps of them.
 */
import type { Param, ProcWire, Sql } from './db';
import type { SettleArgs } from './credit-settle';
import { madeHold, type Hold } from './holds';
import type { Generation } from './generations';

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

export const settleWire: ProcWire<SettleArgs> = {
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
