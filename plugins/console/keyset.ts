/**
 * @module
 * Keyset paging of the console's lists (accounts, keys): one sort column (or expression) and the row's id as the tie
 * break, a cursor that carries the sort it was made for, and LIKE patterns taken literally. Every row is reachable
 * however many there are, and a page costs the same at row 10 as at row 100,000.
 */
import { errors, num } from '../../src/plugin';

/** One way a list may be sorted: its SQL (a column or an expression) and whether its values are numbers. */
export interface SortKey {
  sql: string;
  numeric: boolean;
}

export type Cursor = [sort: string, value: number | string, id: string];

export function cursorOut(sort: string, value: unknown, id: unknown, numeric: boolean): string {
  const v = numeric ? num(value) : String(value);
  return Buffer.from(JSON.stringify([sort, v, String(id)])).toString('base64url');
}

/** The cursor a previous page gave out, for this sort; anything else is a 400 `invalid_cursor`. */
export function cursorIn(s: string | undefined, sort: string): Cursor | undefined {
  if (s === undefined) return undefined;
  try {
    const v = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v[0] === sort && ['number', 'string'].includes(typeof v[1]) && typeof v[2] === 'string')
      return v as Cursor;
  } catch {
    // fall through
  }
  throw errors.invalidRequest('cursor is not one this endpoint gave out for this sort', 'cursor', 'invalid_cursor');
}

/** The condition and parameters of the rows after `c` in the order `key`, `id` (descending or not). */
export function after(
  c: Cursor,
  key: SortKey,
  id: string,
  desc: boolean,
): { sql: string; params: Array<string | number> } {
  const cmp = desc ? '<' : '>';
  return { sql: `(${key.sql} ${cmp} ? OR (${key.sql} = ? AND ${id} ${cmp} ?))`, params: [c[1], c[1], c[2]] };
}

/** `%`, `_` and the escape itself, taken literally in a LIKE pattern (ESCAPE '\'). */
export function likeEscape(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}
