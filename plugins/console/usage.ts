import { fromNano, num, type Db, type Param } from '../../src/plugin';
import { DAY_MS, FROM_GENERATIONS, rollupStepProc, SUMS, WATERMARK } from './store/procedures';

export { DAY_MS };

/** The dimensions a daily aggregate can be grouped by, and their columns. */
export const DIMENSIONS = {
  date: 'day',
  account: 'account_id',
  key: 'key_hash',
  model: 'model',
  provider: 'provider',
  deployment: 'deployment',
  app: 'app',
} as const;
export type Dimension = keyof typeof DIMENSIONS;
export const DEFAULT_GROUP: readonly Dimension[] = ['date', 'account', 'key', 'model', 'provider', 'deployment', 'app'];

export interface UsageQuery {
  /** UTC day numbers (days since 1970-01-01), both inclusive. */
  fromDay: number;
  toDay: number;
  accountId?: string;
  keyHash?: string;
  model?: string;
  app?: string;
  groupBy: readonly Dimension[];
  limit: number;
  /** Values of the group columns of the last row of the previous page. */
  after?: ReadonlyArray<string | number>;
}

export interface UsageRow {
  day: number | null;
  accountId: string | null;
  keyHash: string | null;
  model: string | null;
  provider: string | null;
  deployment: string | null;
  app: string | null;
  requests: number;
  errors: number;
  promptTokens: number;
  completionTokens: number;
  reasoningTokens: number;
  cachedTokens: number;
  /** nano-credits */
  cost: number;
  latencyMsSum: number;
}

export function dayOf(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

export function dayString(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

/** 'YYYY-MM-DD' -> day number, or undefined when it is not a date. */
export function parseDay(s: string): number | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return undefined;
  const t = Date.parse(`${s}T00:00:00Z`);
  return Number.isNaN(t) ? undefined : dayOf(t);
}

/**
 * Daily usage aggregates. `rollUp` moves generation records older than `lagMs` into
 * usage_daily and advances the watermark in the same transaction (replicas take turns on
 * an advisory lock); `query` reads the aggregates plus the few records past the watermark,
 * in one statement so both sides see the same watermark. Nothing scans all records.
 */
export class UsageRepo {
  private readonly opts: { lagMs: number; maxSpanMs: number; maxRecords: number };
  private readonly recorded: (() => number) | undefined;
  /** `recorded`'s count when a roll-up last found every record rolled up. */
  private allRolledAt: number | undefined;

  /**
   * `recorded`: where this process is the only one recording generations (SQLite, memory), how many it has committed
   * so far. While that count stays where it was when a roll-up found nothing left to roll up, roll-ups skip the store
   * altogether: an idle gateway sends its store nothing, and its worker thread can stop.
   */
  constructor(
    private readonly db: Db,
    opts: { lagMs?: number; maxSpanMs?: number; maxRecords?: number; recorded?: () => number } = {},
  ) {
    this.opts = {
      lagMs: opts.lagMs ?? 10_000,
      maxSpanMs: opts.maxSpanMs ?? 6 * 3_600_000,
      maxRecords: opts.maxRecords ?? 2_000,
    };
    this.recorded = opts.recorded;
  }

  /**
   * Roll up what is due; returns the number of aggregate rows written. Loops over steps of at most maxSpanMs and
   * about maxRecords records each, so that the store's writer is never held long: the settlements of requests
   * commit between them.
   */
  async rollUp(now = Date.now()): Promise<number> {
    // Read before the store: a record committed after this reading moves the count again.
    const count = this.recorded?.();
    if (count !== undefined && count === this.allRolledAt) return 0;
    // Nothing recorded since the watermark: no transaction, no write (an idle gateway leaves its store untouched,
    // so SQLite's WAL is truncated and its checkpointer stops). The watermark stays; the next records widen the span.
    const mark = await this.db.get<{ value: string }>('SELECT value FROM gateway_meta WHERE key = ?', [WATERMARK]);
    if (mark) {
      const newer = await this.db.get('SELECT 1 AS x FROM generations WHERE created_at > ? LIMIT 1', [
        Number(mark.value),
      ]);
      if (!newer) {
        this.allRolledAt = count;
        return 0;
      }
    }
    let written = 0;
    for (;;) {
      const step = await this.db.call(rollupStepProc, { now, ...this.opts });
      written += step.rows;
      if (!step.more) return written;
    }
  }

  async query(q: UsageQuery): Promise<UsageRow[]> {
    const where: string[] = [];
    const params: Param[] = [];
    const filter = (col: string, v: string | undefined) => {
      if (v !== undefined) {
        where.push(`${col} = ?`);
        params.push(v);
      }
    };
    filter('account_id', q.accountId);
    filter('key_hash', q.keyHash);
    filter('model', q.model);
    filter('app', q.app);
    const cond = where.length ? ` AND ${where.join(' AND ')}` : '';
    const cols = q.groupBy.map((d) => DIMENSIONS[d]);
    // Daily or per-account totals without other filters read the (much smaller) per-account table.
    const totalsOnly =
      q.groupBy.every((d) => d === 'date' || d === 'account') &&
      q.keyHash === undefined &&
      q.model === undefined &&
      q.app === undefined;
    const rolled = totalsOnly
      ? `'' AS key_hash, '' AS model, '' AS provider, '' AS deployment, '' AS app, ` +
        `${SUMS.join(', ')} FROM usage_daily_accounts`
      : `key_hash, model, provider, deployment, app, ${SUMS.join(', ')} FROM usage_daily`;
    const all: Param[] = [
      q.fromDay,
      q.toDay,
      ...params,
      WATERMARK,
      q.fromDay * DAY_MS,
      (q.toDay + 1) * DAY_MS,
      ...params,
    ];
    let page = '';
    if (q.after && q.after.length === cols.length && cols.length > 0) {
      // Keyset: day descending, every other column ascending.
      const rest = cols.filter((c) => c !== 'day');
      const restVals = q.after.filter((_, i) => cols[i] !== 'day') as Param[];
      const tuple = rest.length ? `(${rest.join(', ')}) > (${rest.map(() => '?').join(', ')})` : 'false';
      if (cols.includes('day')) {
        const dayVal = q.after[cols.indexOf('day')] as number;
        page = `WHERE (day < ? OR (day = ? AND ${tuple}))`;
        all.push(dayVal, dayVal, ...restVals);
      } else {
        page = `WHERE ${tuple}`;
        all.push(...restVals);
      }
    }
    const order = cols.map((c) => (c === 'day' ? 'day DESC' : c)).join(', ');
    all.push(q.limit);
    const rows = await this.db.all<Record<string, unknown>>(
      `SELECT ${cols.length ? `${cols.join(', ')}, ` : ''}${SUMS.map((s) => `SUM(${s}) AS ${s}`).join(', ')} FROM (
         SELECT day, account_id, ${rolled} WHERE day >= ? AND day <= ?${cond}
         UNION ALL
         SELECT * FROM (SELECT ${FROM_GENERATIONS} FROM generations
           WHERE created_at > COALESCE((SELECT CAST(value AS BIGINT) FROM gateway_meta WHERE key = ?), -1)
           AND created_at >= ? AND created_at < ?) tail WHERE true${cond}
       ) u ${page} ${cols.length ? `GROUP BY ${cols.join(', ')} ORDER BY ${order}` : ''} LIMIT ?`,
      all,
    );
    return rows.map(toUsageRow);
  }
}

function str(v: unknown): string | null {
  return v === undefined ? null : String(v);
}

function toUsageRow(r: Record<string, unknown>): UsageRow {
  return {
    day: r.day === undefined ? null : num(r.day),
    accountId: str(r.account_id),
    keyHash: str(r.key_hash),
    model: str(r.model),
    provider: str(r.provider),
    deployment: str(r.deployment),
    app: str(r.app),
    requests: num(r.requests),
    errors: num(r.errors),
    promptTokens: num(r.prompt_tokens),
    completionTokens: num(r.completion_tokens),
    reasoningTokens: num(r.reasoning_tokens),
    cachedTokens: num(r.cached_tokens),
    cost: num(r.cost),
    latencyMsSum: num(r.latency_ms_sum),
  };
}

/** A row in OpenRouter's /api/v1/activity shape, with the gateway's extra dimensions. */
export function activityJson(r: UsageRow) {
  return {
    date: r.day === null ? null : dayString(r.day),
    model: r.model,
    model_permaslug: r.model,
    endpoint_id: r.deployment === null ? null : r.deployment || null,
    provider_name: r.provider === null ? null : r.provider || null,
    usage: fromNano(r.cost),
    byok_usage_inference: 0,
    requests: r.requests,
    prompt_tokens: r.promptTokens,
    completion_tokens: r.completionTokens,
    reasoning_tokens: r.reasoningTokens,
    cached_tokens: r.cachedTokens,
    errors: r.errors,
    mean_latency_ms: r.requests ? Math.round((r.latencyMsSum / r.requests) * 10) / 10 : null,
    api_key_hash: r.keyHash === null ? null : r.keyHash || null,
    account_id: r.accountId,
    app: r.app === null ? null : r.app || null,
  };
}

/** The cursor of a page: the last row's group values, base64url JSON. */
export function cursorOf(r: UsageRow, groupBy: readonly Dimension[]): string {
  const rec = r as unknown as Record<string, unknown>;
  const field: Record<Dimension, string> = {
    date: 'day',
    account: 'accountId',
    key: 'keyHash',
    model: 'model',
    provider: 'provider',
    deployment: 'deployment',
    app: 'app',
  };
  return Buffer.from(JSON.stringify(groupBy.map((d) => rec[field[d]]))).toString('base64url');
}

export function parseCursor(s: string): Array<string | number> | undefined {
  try {
    const v = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as unknown;
    return Array.isArray(v) && v.every((x) => typeof x === 'string' || typeof x === 'number') ? v : undefined;
  } catch {
    return undefined;
  }
}
