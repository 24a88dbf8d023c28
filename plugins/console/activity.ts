import { Readable } from 'node:stream';
import type Koa from 'koa';
import { errors } from '../../src/plugin';
import { accountFilter, dayRange, groupParam, limitParam, qs, type Scope } from './params';
import { activityJson, cursorOf, parseCursor, type Sum, type UsageQuery, type UsageRepo, type UsageRow } from './usage';
import { SUMS } from './store/rollups';

const CSV_COLUMNS = [
  'date',
  'model',
  'provider_name',
  'endpoint_id',
  'api_key_hash',
  'account_id',
  'app',
  'requests',
  'errors',
  'prompt_tokens',
  'completion_tokens',
  'reasoning_tokens',
  'cached_tokens',
  'usage',
  'mean_latency_ms',
] as const;
/**
 * Rows of the CSV export read at a time. Small, so that the first rows leave after a short read, and the page read
 * ahead while one is written (Readable.from asks for the next as soon as the socket takes the last) costs little.
 */
const CSV_PAGE = 250;
/** The sums the CSV's columns show: every one but timeouts, cancelled and client errors, which it does not. */
const CSV_SUMS: readonly Sum[] = SUMS.filter((s) => s !== 'timeouts' && s !== 'cancelled' && s !== 'client_errors');

/** Strings already made cells: a page's thousand rows repeat a few days, accounts, keys, models and apps. */
const cells = new Map<string, string>();

function csvCell(v: string | number | null): string {
  if (v === null) return '';
  if (typeof v === 'number') return String(v);
  let cell = cells.get(v);
  if (cell === undefined) {
    // Quote when needed; a leading = + - @ is prefixed so spreadsheets do not run it as a formula.
    const safe = /^[=+\-@\t\r]/.test(v) ? `'${v}` : v;
    cell = /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
    if (cells.size >= 10_000) cells.clear();
    cells.set(v, cell);
  }
  return cell;
}

/** A row's CSV line. */
function csvLine(r: UsageRow): string {
  const j = activityJson(r);
  let line = csvCell(j[CSV_COLUMNS[0]]);
  for (let i = 1; i < CSV_COLUMNS.length; i++) line += `,${csvCell(j[CSV_COLUMNS[i]])}`;
  return `${line}\n`;
}

/** The analytics query a request asks for, within what its caller may see. */
export function activityQuery(ctx: Koa.Context, scope: Scope, limit: number): UsageQuery {
  const cursor = qs(ctx, 'cursor', 2000);
  const after = cursor === undefined ? undefined : parseCursor(cursor);
  if (cursor !== undefined && after === undefined)
    throw errors.invalidRequest('cursor is not one this endpoint gave out', 'cursor', 'invalid_cursor');
  return {
    ...dayRange(ctx),
    accountId: accountFilter(ctx, scope),
    keyHash: qs(ctx, 'api_key_hash', 64) ?? qs(ctx, 'key_hash', 64),
    model: qs(ctx, 'model'),
    app: qs(ctx, 'app', 500),
    groupBy: groupParam(ctx),
    limit,
    after,
  };
}

/**
 * GET activity: daily aggregates in OpenRouter's /api/v1/activity shape, one page at a
 * time (`next_cursor`), or with `format=csv` every page streamed as CSV, each page read
 * only when the previous one has been written.
 */
export async function serveActivity(ctx: Koa.Context, repo: UsageRepo, scope: Scope): Promise<void> {
  if (qs(ctx, 'format', 10) === 'csv') {
    const q = { ...activityQuery(ctx, scope, CSV_PAGE), sums: CSV_SUMS };
    // The first page is read before the head is written: a query that fails is an error answer, not a cut CSV.
    const first = await repo.query(q);
    ctx.type = 'text/csv; charset=utf-8';
    ctx.set('Content-Disposition', `attachment; filename="activity.csv"`);
    ctx.body = Readable.from(csvPages(repo, q, first));
    return;
  }
  const q = activityQuery(ctx, scope, limitParam(ctx, 500, 5000));
  const rows = await repo.query({ ...q, limit: q.limit + 1 });
  const page = rows.slice(0, q.limit);
  ctx.body = {
    data: page.map(activityJson),
    next_cursor: rows.length > q.limit ? cursorOf(page[page.length - 1], q.groupBy) : null,
  };
}

async function* csvPages(repo: UsageRepo, q: UsageQuery, first: UsageRow[]): AsyncGenerator<string> {
  yield `${CSV_COLUMNS.join(',')}\n`;
  let after = q.after;
  for (let page = 0; ; page++) {
    const rows = page === 0 ? first : await repo.query({ ...q, after });
    if (rows.length === 0) return;
    let text = '';
    for (const r of rows) text += csvLine(r);
    yield text;
    if (rows.length < q.limit) return;
    after = parseCursor(cursorOf(rows[rows.length - 1], q.groupBy));
  }
}
