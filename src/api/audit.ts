import type Router from '@koa/router';
import type Koa from 'koa';
import { errors } from '../errors';
import type { AdminGuard } from '../auth/contract';
import type { AuditQuery, AuditRecord, AuditSource } from '../store/audit';
import type { Store } from '../store/index';

const SOURCES: ReadonlySet<string> = new Set(['admin_api', 'console', 'cli', 'oauth', 'sso', 'startup']);
const COLUMNS = ['id', 'created_at', 'actor', 'role', 'source', 'address', 'action', 'target', 'before', 'after'];

/** One query value: a string or nothing (repeated values and other shapes are the client's 400). */
function one(ctx: Koa.Context, name: string): string | undefined {
  const v = Object.hasOwn(ctx.query, name) ? ctx.query[name] : undefined;
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.length > 256)
    throw errors.invalidRequest(`${name} must be one short value`, name, 'invalid_value');
  return v;
}

function time(ctx: Koa.Context, name: string): number | undefined {
  const v = one(ctx, name);
  if (v === undefined) return undefined;
  const ms = /^\d{1,15}$/.test(v) ? Number(v) : Date.parse(v);
  if (!Number.isFinite(ms))
    throw errors.invalidRequest(`${name} must be a date or epoch milliseconds`, name, 'invalid_value');
  return ms;
}

/** The filters of GET /v1/audit. */
export function auditQuery(ctx: Koa.Context, maxLimit: number): AuditQuery {
  const limitText = one(ctx, 'limit');
  const limit = limitText === undefined ? 100 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > maxLimit)
    throw errors.invalidRequest(`limit must be an integer from 1 to ${maxLimit}`, 'limit', 'invalid_value');
  const source = one(ctx, 'source');
  if (source !== undefined && !SOURCES.has(source))
    throw errors.invalidRequest(`source must be one of ${[...SOURCES].join(', ')}`, 'source', 'invalid_value');
  return {
    since: time(ctx, 'since'),
    until: time(ctx, 'until'),
    actor: one(ctx, 'actor'),
    action: one(ctx, 'action'),
    target: one(ctx, 'target'),
    source: source as AuditSource | undefined,
    before: one(ctx, 'before'),
    limit,
  };
}

function recordJson(r: AuditRecord) {
  return {
    id: r.id,
    created_at: new Date(r.createdAt).toISOString(),
    actor: r.actor,
    role: r.role,
    source: r.source,
    address: r.address,
    action: r.action,
    target: r.target,
    before: r.before,
    after: r.after,
  };
}

/** A CSV field: quoted when it must be, a formula's first character defused (spreadsheets run `=...`). */
function csvField(v: unknown): string {
  let s = v === null || v === undefined ? '' : typeof v === 'string' ? v : JSON.stringify(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/**
 * GET /v1/audit: the audit log, newest first, filtered (since, until, actor, action, target, source), paged (`before`
 * = the last id of the previous page), as JSON, or exported as CSV or NDJSON (`format`, up to 10,000 records).
 */
export function registerAuditRoutes(router: Router, store: Store, guard: AdminGuard): void {
  router.get('/v1/audit', async (ctx) => {
    await guard(ctx, 'viewer');
    await serveAudit(ctx, store);
  });
}

/**
 * The answer of GET /v1/audit (and the console's GET /console/api/audit), its caller already checked: the filters of
 * `auditQuery`, as JSON (`{data, next}`), or exported as CSV or NDJSON (`format`, up to 10,000 records).
 */
export async function serveAudit(ctx: Koa.Context, store: Store): Promise<void> {
  const format = one(ctx, 'format') ?? 'json';
  if (format !== 'json' && format !== 'csv' && format !== 'ndjson')
    throw errors.invalidRequest('format must be json, csv or ndjson', 'format', 'invalid_value');
  const records = (await store.audit.list(auditQuery(ctx, format === 'json' ? 1000 : 10_000))).map(recordJson);
  if (format === 'json') {
    ctx.body = { data: records, next: records.length > 0 ? records[records.length - 1].id : null };
    return;
  }
  ctx.set('Content-Disposition', `attachment; filename="audit.${format}"`);
  if (format === 'ndjson') {
    ctx.type = 'application/x-ndjson';
    ctx.body = records.map((r) => `${JSON.stringify(r)}\n`).join('');
    return;
  }
  ctx.type = 'text/csv';
  const rows = records.map((r) => COLUMNS.map((c) => csvField(r[c as keyof typeof r])).join(','));
  ctx.body = [COLUMNS.join(','), ...rows].join('\r\n') + '\r\n';
}
