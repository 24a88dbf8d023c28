import { fromNano, num, type Db, type Param } from '../../src/plugin';
import { DAILY_AGGREGATES, DAY_MS, SUMS } from './store/rollups';

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
  /** The sums to read (by default every one); those not read are 0 in the rows. */
  sums?: readonly Sum[];
}

export type Sum = (typeof SUMS)[number];

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

/** Day numbers already spelled: a page of thousands of rows has a few days (a Date and its ISO string each cost). */
const spelled = new Map<number, string>();

export function dayString(day: number): string {
  let s = spelled.get(day);
  if (s === undefined) {
    s = new Date(day * DAY_MS).toISOString().slice(0, 10);
    if (spelled.size > 1000) spelled.clear();
    spelled.set(day, s);
  }
  return s;
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
    const filters: Array<[string, string | undefined]> = [
      ['account_id', q.accountId],
      ['key_hash', q.keyHash],
      ['model', q.model],
      ['app', q.app],
    ];
    for (const [col, v] of filters) {
      if (v === undefined) continue;
      where.push(`${col} = ?`);
      params.push(v);
    }
    const cols: string[] = q.groupBy.map((d) => DIMENSIONS[d]);
    const { table, columns } = aggregateFor([...cols, ...filters.filter(([, v]) => v !== undefined).map(([c]) => c)]);
    // Grouped by every column the aggregate keeps, each row is its own group: read in order, nothing to add up.
    const whole = columns.every((c) => cols.includes(c));
    const page = keysetAfter(cols, q.after);
    if (page) {
      where.push(page.sql);
      params.push(...page.params);
    }
    // The day first whatever the place of `date` in group_by, as the cursor's condition and the day windows have it.
    const order = [...(cols.includes('day') ? ['day DESC'] : []), ...cols.filter((c) => c !== 'day')].join(', ');
    const sums = (q.sums ?? SUMS).map((s) => (whole ? s : `SUM(${s}) AS ${s}`));
    const sql = (days: string) => `SELECT ${[...cols, ...sums].join(', ')} FROM ${table}
       WHERE ${days}${where.map((w) => ` AND ${w}`).join('')}
       ${cols.length ? `${whole ? '' : `GROUP BY ${cols.join(', ')} `}ORDER BY ${order}` : ''} LIMIT ?`;
    // One day as `day = ?`: the rows of a constant day come in the order of the aggregate's key, no sort needed.
    const read = (from: number, to: number, limit: number) =>
      from === to
        ? this.db.all<Record<string, unknown>>(sql('day = ?'), [from, ...params, limit])
        : this.db.all<Record<string, unknown>>(sql('day >= ? AND day <= ?'), [from, to, ...params, limit]);
    if (!cols.includes('day')) return (await read(q.fromDay, q.toDay, q.limit)).map(toUsageRow);
    // Newest day first: the days are read in windows back from the newest (the cursor's day), each as long as the
    // rows still wanted need at the rate of the windows before (four times as long after an empty one), so that a page
    // costs about the rows of its own days, not those of the whole range.
    const rows: Array<Record<string, unknown>> = [];
    let to = Math.min(q.toDay, page ? Number(q.after?.[cols.indexOf('day')]) : q.toDay);
    for (let span = 1; to >= q.fromDay && rows.length < q.limit;) {
      const from = Math.max(q.fromDay, to - span + 1);
      const got = await read(from, to, q.limit - rows.length);
      rows.push(...got);
      span = got.length ? Math.ceil(((q.limit - rows.length) * (to - from + 1)) / got.length) : span * 4;
      to = from - 1;
    }
    return rows.map(toUsageRow);
  }
}

/** The smallest daily aggregate that keeps every one of `columns` (usage_daily keeps them all). */
function aggregateFor(columns: readonly string[]): (typeof DAILY_AGGREGATES)[number] {
  return (
    DAILY_AGGREGATES.find((a) => columns.every((c) => a.columns.includes(c))) ??
    DAILY_AGGREGATES[DAILY_AGGREGATES.length - 1]
  );
}

/**
 * The keyset condition of the page after `after` (the previous page's last group values, in `cols`' order): day
 * descending, every other column ascending. On the group columns themselves, so a WHERE, before the grouping.
 */
function keysetAfter(
  cols: readonly string[],
  after: ReadonlyArray<string | number> | undefined,
): { sql: string; params: Param[] } | undefined {
  if (!after || after.length !== cols.length || cols.length === 0) return undefined;
  const rest = cols.filter((c) => c !== 'day');
  const restVals = after.filter((_, i) => cols[i] !== 'day') as Param[];
  const tuple = rest.length ? `(${rest.join(', ')}) > (${rest.map(() => '?').join(', ')})` : 'false';
  if (!cols.includes('day')) return { sql: tuple, params: restVals };
  const dayVal = after[cols.indexOf('day')] as number;
  return { sql: `(day < ? OR (day = ? AND ${tuple}))`, params: [dayVal, dayVal, ...restVals] };
}

function str(v: unknown): string | null {
  return v === undefined ? null : String(v);
}

function toUsageRow(r: Record<string, unknown>): UsageRow {
  // A sum the query did not read (UsageQuery.sums) is 0.
  const sum = (v: unknown) => (v === undefined ? 0 : num(v));
  return {
    day: r.day === undefined ? null : num(r.day),
    accountId: str(r.account_id),
    keyHash: str(r.key_hash),
    model: str(r.model),
    provider: str(r.provider),
    deployment: str(r.deployment),
    app: str(r.app),
    requests: sum(r.requests),
    errors: sum(r.errors),
    timeouts: sum(r.timeouts),
    cancelled: sum(r.cancelled),
    clientErrors: sum(r.client_errors),
    promptTokens: sum(r.prompt_tokens),
    completionTokens: sum(r.completion_tokens),
    reasoningTokens: sum(r.reasoning_tokens),
    cachedTokens: sum(r.cached_tokens),
    cost: sum(r.cost),
    latencyMsSum: sum(r.latency_ms_sum),
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

/** The field of a usage row that holds each dimension's value. */
export const DIMENSION_FIELD: Readonly<Record<Dimension, keyof UsageRow>> = {
  date: 'day',
  account: 'accountId',
  key: 'keyHash',
  model: 'model',
  provider: 'provider',
  deployment: 'deployment',
  app: 'app',
};

/** The cursor of a page: the last row's group values, base64url JSON. */
export function cursorOf(r: UsageRow, groupBy: readonly Dimension[]): string {
  return Buffer.from(JSON.stringify(groupBy.map((d) => r[DIMENSION_FIELD[d]]))).toString('base64url');
}

export function parseCursor(s: string): Array<string | number> | undefined {
  try {
    const v = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as unknown;
    return Array.isArray(v) && v.every((x) => typeof x === 'string' || typeof x === 'number') ? v : undefined;
  } catch {
    return undefined;
  }
}
