import type Koa from 'koa';
import { errors } from '../../src/plugin';
import { dayOf, parseDay, type Dimension, DIMENSIONS, DEFAULT_GROUP } from './usage';

/** Whose data a request may see: everything (admin) or one account. */
export interface Scope {
  isAdmin: boolean;
  accountId: string;
}

/** A string query parameter (first value), bounded in length. */
export function qs(ctx: Koa.Context, name: string, max = 256): string | undefined {
  const v = ctx.query[name];
  const s = Array.isArray(v) ? v[0] : v;
  if (s === undefined || s === '') return undefined;
  if (s.length > max) throw errors.invalidRequest(`${name} is too long`, name, 'invalid_parameter');
  return s;
}

export function limitParam(ctx: Koa.Context, dflt: number, max: number): number {
  const s = qs(ctx, 'limit', 10);
  if (s === undefined) return dflt;
  const n = Number(s);
  if (!Number.isInteger(n) || n < 1 || n > max)
    throw errors.invalidRequest(`limit must be an integer from 1 to ${max}`, 'limit', 'invalid_parameter');
  return n;
}

/** The account filter a caller may use: an account only ever sees its own. */
export function accountFilter(ctx: Koa.Context, scope: Scope): string | undefined {
  return scope.isAdmin ? qs(ctx, 'account_id', 64) : scope.accountId;
}

const MAX_DAYS = 366;

/**
 * The day range of an analytics request: `date` (one day, OpenRouter's parameter), or
 * `from` / `to` (YYYY-MM-DD, inclusive); by default the last 30 UTC days including today.
 */
export function dayRange(ctx: Koa.Context, now = Date.now()): { fromDay: number; toDay: number } {
  const day = (name: string) => {
    const s = qs(ctx, name, 10);
    if (s === undefined) return undefined;
    const d = parseDay(s);
    if (d === undefined) throw errors.invalidRequest(`${name} must be a date (YYYY-MM-DD)`, name, 'invalid_date');
    return d;
  };
  const date = day('date');
  if (date !== undefined) return { fromDay: date, toDay: date };
  const toDay = day('to') ?? dayOf(now);
  const fromDay = day('from') ?? toDay - 29;
  if (fromDay > toDay) throw errors.invalidRequest('from must not be after to', 'from', 'invalid_date');
  if (toDay - fromDay >= MAX_DAYS)
    throw errors.invalidRequest(`a range spans at most ${MAX_DAYS} days`, 'from', 'invalid_date');
  return { fromDay, toDay };
}

export function groupParam(ctx: Koa.Context): Dimension[] {
  const s = qs(ctx, 'group_by', 100);
  if (s === undefined) return [...DEFAULT_GROUP];
  const dims = s.split(',').map((d) => d.trim());
  // Own keys only: `constructor`, `__proto__` or `toString` are no dimension (they reached the SQL as a column).
  for (const d of dims)
    if (!Object.hasOwn(DIMENSIONS, d))
      throw errors.invalidRequest(
        `group_by takes: ${Object.keys(DIMENSIONS).join(', ')}`,
        'group_by',
        'invalid_parameter',
      );
  return [...new Set(dims)] as Dimension[];
}

/** ?from= / ?to= as ISO dates or date-times -> epoch ms. */
export function timeParam(ctx: Koa.Context, name: string): number | undefined {
  const s = qs(ctx, name, 40);
  if (s === undefined) return undefined;
  const t = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(s) ? `${s}T00:00:00Z` : s);
  if (Number.isNaN(t))
    throw errors.invalidRequest(`${name} must be an ISO 8601 date or date-time`, name, 'invalid_date');
  return t;
}
