import { num, type Db, type Param } from '../../src/plugin';
import { byFewest, probeJoin, probesOf, type Probe } from './record-probes';
import { outcomeSql, type Outcome } from './store/rollups';
import { whereSql } from './sql';

export interface RecordFilter {
  accountId?: string;
  keyHash?: string;
  model?: string;
  status?: 'completed' | 'incomplete' | 'error';
  /** One of OUTCOMES (store/rollups.ts); `error` for any of upstream_error, timeout and client_error. */
  outcome?: Outcome | 'error';
  /** epoch ms, inclusive / exclusive */
  from?: number;
  to?: number;
}

export interface RecordPage {
  rows: Array<Record<string, unknown>>;
  /** Present when there may be more rows. */
  next: string | null;
}

const COLUMNS = [
  ...['id', 'account_id', 'key_hash', 'model', 'provider', 'deployment', 'prompt_tokens', 'completion_tokens', 'cost'],
  ...['latency_ms', 'ttft_ms', 'status', 'error_code', 'streamed', 'app_referer', 'app_title', 'created_at'],
  'http_status',
];
/** The listed columns of a record, over the row alias `r` (or bare). */
const listColumns = (r = '') =>
  [...COLUMNS.map((c) => (r ? `${r}.${c} AS ${c}` : c)), `(${outcomeSql(r)}) AS outcome`].join(', ');
const LIST_COLUMNS = listColumns();

/** The outcomes the `error` filter stands for. */
const ERRORS: readonly Outcome[] = ['upstream_error', 'timeout', 'client_error'];

/** The conditions of a filter whose outcome, if any, is one of OUTCOMES. */
function where(f: RecordFilter & { outcome?: Outcome }): { sql: string[]; params: Param[] } {
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
  // The very expression of the index generations_outcome, so that a rare outcome is found by it, not by a scan.
  if (f.outcome !== undefined) {
    sql.push(`(${outcomeSql()}) = ?`);
    params.push(f.outcome);
  }
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

type Cursor = { t: number; id: string };

/** The filters of each statement a page is made of: one, or one for each outcome that `error` stands for. */
function parts(f: RecordFilter): Array<RecordFilter & { outcome?: Outcome }> {
  // Any error: the newest page of each of its outcomes (each an ordered range of generations_outcome), merged. With
  // the three in one IN, the database read every error record there was to sort them.
  return f.outcome === 'error' ? ERRORS.map((outcome) => ({ ...f, outcome })) : [{ ...f, outcome: f.outcome }];
}

/** One part's statement, planned by the database. */
function select(g: RecordFilter & { outcome?: Outcome }, limit: number, after?: Cursor) {
  const w = where(g);
  if (after) {
    // The same condition as (created_at, id) < (t, id), with a bound on created_at alone that an index range uses.
    w.sql.push('created_at <= ? AND (created_at < ? OR id < ?)');
    w.params.push(after.t, after.t, after.id);
  }
  const sql = `SELECT ${LIST_COLUMNS} FROM generations ${whereSql(w.sql)} ORDER BY created_at DESC, id DESC LIMIT ?`;
  return { sql, params: [...w.params, limit] };
}

/** The statement of one page: `after` the previous page's last (created_at, id). */
async function pageQuery(
  db: Db,
  f: RecordFilter,
  limit: number,
  after?: Cursor,
): Promise<{ sql: string; params: Param[] }> {
  const probes = probesOf({ ...f, outcome: f.outcome === 'error' ? ERRORS : f.outcome });
  const selects =
    db.dialect === 'sqlite' && probes.length >= 2
      ? await probeSelects(db, f, probes, limit, after)
      : parts(f).map((g) => select(g, limit, after));
  if (selects.length === 1) return selects[0];
  return {
    sql: `SELECT * FROM (${selects.map((p) => `SELECT * FROM (${p.sql}) p`).join(' UNION ALL ')}) u
      ORDER BY created_at DESC, id DESC LIMIT ?`,
    params: [...selects.flatMap((p) => p.params), limit],
  };
}

/**
 * SQLite, two filters or more: the narrowest one's index walked, the others looked up in theirs (./record-probes.ts).
 * A walked filter of several values (`error`'s outcomes) is walked once for each, merged; looked up, it is one IN.
 */
async function probeSelects(db: Db, f: RecordFilter, probes: Probe[], limit: number, after?: Cursor) {
  const t = { from: f.from, to: f.to, upTo: after?.t };
  const [walk, ...rest] = await byFewest(db, probes, t);
  const values = typeof walk.value === 'string' ? [walk.value] : walk.value;
  return values.map((value) => probeJoin(listColumns('g'), [{ ...walk, value }, ...rest], t, after?.id, limit));
}

/**
 * Generation records newest first, a page at a time: keyset pagination on (created_at, id)
 * so that page N costs what page 1 costs. The cursor is the last row's (created_at, id).
 */
export async function listRecords(db: Db, f: RecordFilter, limit: number, cursor?: string): Promise<RecordPage> {
  const q = await pageQuery(db, f, limit + 1, cursor ? parseRecordCursor(cursor) : undefined);
  const rows = await db.all<Record<string, unknown>>(q.sql, q.params);
  const more = rows.length > limit;
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    rows: page,
    next: more && last ? Buffer.from(JSON.stringify([num(last.created_at), last.id])).toString('base64url') : null,
  };
}

function parseRecordCursor(s: string): Cursor | undefined {
  try {
    const v = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && typeof v[0] === 'number' && typeof v[1] === 'string') return { t: v[0], id: v[1] };
  } catch {
    // fall through
  }
  return undefined;
}
