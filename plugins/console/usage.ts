import { fromNano, num, type Db, type Param } from '../../src/plugin';
import { DAY_MS, SUMS } from './store/rollups';

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
  /** Upstream errors, timeouts and client errors (store/rollups.ts). */
  errors: number;
  timeouts: number;
  cancelled: number;
  clientErrors: number;
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
 * The usage aggregates, kept by the database as records are written (store/rollups.ts): every number is exact at once
 * and a query reads aggregate rows only, never the records.
 */
export class UsageRepo {
  constructor(private readonly db: Db) {}

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
    const all: Param[] = [q.fromDay, q.toDay, ...params];
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
    timeouts: num(r.timeouts),
    cancelled: num(r.cancelled),
    clientErrors: num(r.client_errors),
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
    timeouts: r.timeouts,
    cancelled: r.cancelled,
    client_errors: r.clientErrors,
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
