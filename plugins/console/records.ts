import { num, numOrNull, type Db, type Param } from '../../src/plugin';
import { whereSql } from './sql';

export interface RecordFilter {
  accountId?: string;
  keyHash?: string;
  model?: string;
  status?: 'completed' | 'incomplete' | 'error';
  /** epoch ms, inclusive / exclusive */
  from?: number;
  to?: number;
}

export interface RecordPage {
  rows: Array<Record<string, unknown>>;
  /** Present when there may be more rows. */
  next: string | null;
}

const LIST_COLUMNS =
  'id, account_id, key_hash, model, provider, deployment, prompt_tokens, completion_tokens, cost, latency_ms, ' +
  'ttft_ms, status, error_code, streamed, app_referer, app_title, created_at';

function where(f: RecordFilter): { sql: string[]; params: Param[] } {
  const sql: string[] = [];
  const params: Param[] = [];
  const eq = (col: string, v: string | undefined) => {
    if (v !== undefined) {
      sql.push(`${col} = ?`);
      params.push(v);
    }
  };
  eq('account_id', f.accountId);
  eq('key_hash', f.keyHash);
  eq('model', f.model);
  eq('status', f.status);
  if (f.from !== undefined) {
    sql.push('created_at >= ?');
    params.push(f.from);
  }
  if (f.to !== undefined) {
    sql.push('created_at < ?');
    params.push(f.to);
  }
  return { sql, params };
}

/**
 * Generation records newest first, a page at a time: keyset pagination on (created_at, id)
 * so that page N costs what page 1 costs. The cursor is the last row's (created_at, id).
 */
export async function listRecords(db: Db, f: RecordFilter, limit: number, cursor?: string): Promise<RecordPage> {
  const w = where(f);
  const after = cursor ? parseRecordCursor(cursor) : undefined;
  if (after) {
    w.sql.push('(created_at < ? OR (created_at = ? AND id < ?))');
    w.params.push(after.t, after.t, after.id);
  }
  const rows = await db.all<Record<string, unknown>>(
    `SELECT ${LIST_COLUMNS} FROM generations ${whereSql(w.sql)} ORDER BY created_at DESC, id DESC LIMIT ?`,
    [...w.params, limit + 1],
  );
  const more = rows.length > limit;
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    rows: page,
    next: more && last ? Buffer.from(JSON.stringify([num(last.created_at), last.id])).toString('base64url') : null,
  };
}

function parseRecordCursor(s: string): { t: number; id: string } | undefined {
  try {
    const v = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && typeof v[0] === 'number' && typeof v[1] === 'string') return { t: v[0], id: v[1] };
  } catch {
    // fall through
  }
  return undefined;
}

export interface OverviewBucket {
  /** bucket start, epoch ms */
  t: number;
  requests: number;
  errors: number;
  p50: number | null;
  p99: number | null;
  tokens: number;
  /** nano-credits */
  cost: number;
}

/** Most records the live overview reads (the newest ones in its window). */
export const OVERVIEW_MAX_RECORDS = 20_000;

/**
 * The live overview: the last `windowMs` in `buckets` equal buckets, from the newest
 * records (at most OVERVIEW_MAX_RECORDS, read by the created_at index): requests, errors,
 * latency percentiles, tokens, spend. Longer ranges come from the daily aggregates.
 */
export async function overview(
  db: Db,
  f: RecordFilter,
  windowMs: number,
  buckets: number,
  now = Date.now(),
): Promise<{ buckets: OverviewBucket[]; truncated: boolean }> {
  const start = now - windowMs;
  const w = where({ ...f, from: start });
  const rows = await db.all<Record<string, unknown>>(
    'SELECT created_at, latency_ms, status, prompt_tokens, completion_tokens, cost FROM generations ' +
      `WHERE ${w.sql.join(' AND ')} ORDER BY created_at DESC LIMIT ?`,
    [...w.params, OVERVIEW_MAX_RECORDS],
  );
  const size = windowMs / buckets;
  const out: Array<OverviewBucket & { lat: number[] }> = [];
  for (let i = 0; i < buckets; i++)
    out.push({
      t: Math.round(start + i * size),
      requests: 0,
      errors: 0,
      p50: null,
      p99: null,
      tokens: 0,
      cost: 0,
      lat: [],
    });
  for (const r of rows) {
    const i = Math.min(buckets - 1, Math.floor((num(r.created_at) - start) / size));
    if (i < 0) continue;
    const b = out[i];
    b.requests++;
    if (r.status === 'error') b.errors++;
    b.tokens += num(r.prompt_tokens) + num(r.completion_tokens);
    b.cost += num(r.cost);
    const l = numOrNull(r.latency_ms);
    if (l !== null) b.lat.push(l);
  }
  return {
    truncated: rows.length === OVERVIEW_MAX_RECORDS,
    buckets: out.map(({ lat, ...b }) => {
      lat.sort((x, y) => x - y);
      const pct = (p: number) => (lat.length ? lat[Math.min(lat.length - 1, Math.ceil(p * lat.length) - 1)] : null);
      return { ...b, p50: pct(0.5), p99: pct(0.99) };
    }),
  };
}
