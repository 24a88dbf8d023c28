import { num, type Db, type Param } from '../../src/plugin';
import { MINUTE_MS } from './store/rollups';

/** The overview's windows: each as a number of buckets of whole minutes (the minute aggregate's grain). */
export const WINDOWS: Record<string, { buckets: number; minutes: number }> = {
  '15m': { buckets: 15, minutes: 1 },
  '1h': { buckets: 60, minutes: 1 },
  '6h': { buckets: 72, minutes: 5 },
  '24h': { buckets: 96, minutes: 15 },
  '7d': { buckets: 84, minutes: 120 },
};

export interface SeriesBucket {
  /** bucket start, epoch ms */
  t: number;
  requests: number;
  errors: number;
  timeouts: number;
  cancelled: number;
  clientErrors: number;
  tokens: number;
  /** nano-credits */
  cost: number;
  latencyMsSum: number;
  latencyMsMax: number;
}

const SUMS =
  'SUM(requests) AS requests, SUM(errors) AS errors, SUM(timeouts) AS timeouts, SUM(cancelled) AS cancelled, ' +
  'SUM(client_errors) AS client_errors, SUM(prompt_tokens + completion_tokens) AS tokens, SUM(cost) AS cost, ' +
  'SUM(latency_ms_sum) AS latency_ms_sum, MAX(latency_ms_max) AS latency_ms_max';

/**
 * The live overview: the window's buckets (the last one holds the current minute), each the exact sum of its minutes
 * (or hours) from the aggregates kept as records are written, filtered by account and key. Reads at most the window's
 * minute rows of an account or a key (hour rows for a week), whatever the volume of records.
 */
export async function series(
  db: Db,
  f: { accountId?: string; keyHash?: string },
  window: { buckets: number; minutes: number },
  now = Date.now(),
): Promise<SeriesBucket[]> {
  const size = window.minutes;
  const last = Math.floor(Math.floor(now / MINUTE_MS) / size);
  const first = last - window.buckets + 1;
  // The smallest aggregate that answers: a key's minutes, else the accounts' minutes, or their hours for a week.
  const hourly = f.keyHash === undefined && size % 60 === 0;
  const [table, col, unit] =
    f.keyHash !== undefined
      ? ['usage_minute', 'minute', 1]
      : hourly
        ? ['usage_hour_accounts', 'hour', 60]
        : ['usage_minute_accounts', 'minute', 1];
  const where = [`${col} >= ?`, `${col} < ?`];
  const params: Param[] = [(first * size) / unit, ((last + 1) * size) / unit];
  for (const [col, v] of [
    ['account_id', f.accountId],
    ['key_hash', f.keyHash],
  ] as const) {
    if (v === undefined) continue;
    where.push(`${col} = ?`);
    params.push(v);
  }
  // `size` is one of WINDOWS' integers, written into the statement so that both databases divide integers.
  const rows = await db.all<Record<string, unknown>>(
    `SELECT ${col} / ${Math.trunc(size / unit)} AS b, ${SUMS} FROM ${table} WHERE ${where.join(' AND ')} GROUP BY b`,
    params,
  );
  const byBucket = new Map(rows.map((r) => [num(r.b), r]));
  return Array.from({ length: window.buckets }, (_, i) => {
    const r = byBucket.get(first + i);
    return {
      t: (first + i) * size * MINUTE_MS,
      requests: num(r?.requests ?? 0),
      errors: num(r?.errors ?? 0),
      timeouts: num(r?.timeouts ?? 0),
      cancelled: num(r?.cancelled ?? 0),
      clientErrors: num(r?.client_errors ?? 0),
      tokens: num(r?.tokens ?? 0),
      cost: num(r?.cost ?? 0),
      latencyMsSum: num(r?.latency_ms_sum ?? 0),
      latencyMsMax: num(r?.latency_ms_max ?? 0),
    };
  });
}
