import { get, META_UPSERT, num, run, type Proc, type Step } from '../../../src/plugin/procedures';

/**
 * The daily usage aggregates (usage_daily, usage_daily_accounts) are rolled up from generation records by a
 * procedure: on SQLite it runs whole in the writer's thread (one item of a group
 * commit) instead of a transaction driven across threads, which held the writer for as long as the main thread took
 * to send each next statement. The console reads the aggregates (../usage.ts).
 */
export const DAY_MS = 86_400_000;
export const WATERMARK = 'usage_rollup_watermark';
/** Any constant: the advisory lock that makes replicas take turns rolling up (PostgreSQL). */
const ROLLUP_LOCK = 7_270_020;

export const SUMS = [
  'requests',
  'errors',
  'prompt_tokens',
  'completion_tokens',
  'reasoning_tokens',
  'cached_tokens',
  'cost',
  'latency_ms_sum',
] as const;

/** generations -> the usage_daily columns (dimensions, then SUMS), for one record each. */
export const FROM_GENERATIONS = `CAST(created_at / ${DAY_MS} AS INTEGER) AS day, account_id,
  COALESCE(key_hash, '') AS key_hash, model, COALESCE(provider, '') AS provider, COALESCE(deployment, '') AS deployment,
  COALESCE(app_referer, app_title, '') AS app, 1 AS requests, CASE WHEN status = 'error' THEN 1 ELSE 0 END AS errors,
  prompt_tokens, completion_tokens, reasoning_tokens, cached_tokens, cost, COALESCE(latency_ms, 0) AS latency_ms_sum`;

/** SUM() of each of SUMS, in their order. */
const SUM_EACH = SUMS.map((s) => `SUM(${s})`).join(', ');

const ADD_ACCOUNTS = `INSERT INTO usage_daily_accounts (day, account_id, ${SUMS.join(', ')})
  SELECT day, account_id, ${SUM_EACH}
  FROM (SELECT ${FROM_GENERATIONS} FROM generations WHERE created_at > ? AND created_at <= ?) g
  WHERE true GROUP BY day, account_id
  ON CONFLICT (day, account_id) DO UPDATE SET
  ${SUMS.map((s) => `${s} = usage_daily_accounts.${s} + excluded.${s}`).join(', ')}`;

const ADD_DAILY = `INSERT INTO usage_daily
  (day, account_id, key_hash, model, provider, deployment, app, ${SUMS.join(', ')})
  SELECT day, account_id, key_hash, model, provider, deployment, app, ${SUM_EACH}
  FROM (SELECT ${FROM_GENERATIONS} FROM generations WHERE created_at > ? AND created_at <= ?) g
  WHERE true GROUP BY day, account_id, key_hash, model, provider, deployment, app
  ON CONFLICT (day, account_id, key_hash, model, provider, deployment, app) DO UPDATE SET
  ${SUMS.map((s) => `${s} = usage_daily.${s} + excluded.${s}`).join(', ')}`;

function* setWatermark(value: number, now: number): Generator<Step, void, unknown> {
  yield* run(META_UPSERT, [WATERMARK, String(value), now]);
}

interface RollupArgs {
  now: number;
  /** Records younger than this are left to a later step (a record may commit a little after its created_at). */
  lagMs: number;
  /** The longest span of records one step rolls up. */
  maxSpanMs: number;
  /**
   * About how many records one step rolls up at most (all of the last millisecond's are in it): on SQLite a step holds
   * the writer, and every request's settlement waits behind it. 5 s of records under load (~40,000) held it ~65 ms.
   */
  maxRecords: number;
}

/**
 * One roll-up step: records past the watermark, up to `now - lagMs`, one span or about `maxRecords` records, then the
 * watermark moves.
 */
export const rollupStepProc: Proc<RollupArgs, { rows: number; more: boolean }> = {
  name: 'usage.rollup-step',
  *body({ now, lagMs, maxSpanMs, maxRecords }) {
    yield* get({ sqlite: 'SELECT ? AS lock', postgres: 'SELECT pg_advisory_xact_lock(?)' }, [ROLLUP_LOCK]);
    const row = yield* get<{ value: string }>('SELECT value FROM gateway_meta WHERE key = ?', [WATERMARK]);
    let from = row ? Number(row.value) : -1;
    if (!row) {
      const first = yield* get<{ m: unknown }>('SELECT MIN(created_at) AS m FROM generations');
      from = first?.m === null || first?.m === undefined ? now - lagMs : num(first.m) - 1;
    }
    let to = Math.min(now - lagMs, from + maxSpanMs);
    if (to > from) {
      // The created_at of the maxRecords-th record past the watermark: the step ends there, with all of that
      // millisecond's records.
      const nth = yield* get<{ c: unknown }>(
        'SELECT created_at AS c FROM generations WHERE created_at > ? ORDER BY created_at LIMIT 1 OFFSET ?',
        [from, Math.max(0, Math.floor(maxRecords) - 1)],
      );
      if (nth) to = Math.min(to, num(nth.c));
    }
    if (to <= from) {
      if (!row) yield* setWatermark(from, now);
      return { rows: 0, more: false };
    }
    yield* run(ADD_ACCOUNTS, [from, to]);
    const r = yield* run(ADD_DAILY, [from, to]);
    yield* setWatermark(to, now);
    return { rows: r.changes, more: to < now - lagMs };
  },
};
