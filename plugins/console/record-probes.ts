/**
 * @module
 * SQLite's plan for a page of records filtered by two or more of key, account, model, outcome and status. Each of them
 * has an index on (it, created_at); SQLite takes one and reads the table row of every record found there to test the
 * others, so a key's records filtered by a status none of them has cost a table read each (all of the key's records).
 * Here one filter's index is walked newest first, each other filter is looked up in its own index by the entry
 * (value, created_at, rowid), which reads no table row, and only the page's records are read from the table. The
 * walk stops once the page is full; its length is what the walked filter matches back to the page's last record. The
 * filter walked is the one of fewest records, each counted in its index up to COUNT_CAP (no table row read either);
 * past that, INDEXED's order. PostgreSQL intersects the indexes itself (a bitmap AND).
 */
import type { Db, Param } from '../../src/plugin';
import { outcomeSql } from './store/rollups';

/** An equality condition and the index on (its column or expression, created_at) that finds its records in time order. */
export interface Probe {
  index: string;
  /** The column or expression over the row alias `r`, as the index has it. */
  expr: (r: string) => string;
  /** The value, or the values one of which it has (IN). */
  value: string | readonly string[];
}

/** A probe's condition over the row alias `r`. */
function condition(p: Probe, r: string): { sql: string; params: Param[] } {
  if (typeof p.value === 'string') return { sql: `${p.expr(r)} = ?`, params: [p.value] };
  return { sql: `${p.expr(r)} IN (${p.value.map(() => '?').join(', ')})`, params: [...p.value] };
}

/** The filters that have such an index, in the order that walks the fewest records when their counts do not tell. */
const INDEXED: ReadonlyArray<[name: keyof ProbeFilter, index: string, expr: (r: string) => string]> = [
  ['keyHash', 'generations_key', (r) => `${r}.key_hash`],
  ['model', 'generations_model', (r) => `${r}.model`],
  ['accountId', 'generations_account', (r) => `${r}.account_id`],
  ['outcome', 'generations_outcome', (r) => `(${outcomeSql(r)})`],
  ['status', 'generations_status', (r) => `${r}.status`],
];

/** The equality conditions of a records filter that have an index on (them, created_at); a list is any of its values. */
export type ProbeFilter = Partial<Record<'keyHash' | 'model' | 'accountId' | 'outcome' | 'status', Probe['value']>>;

/** The probes of a filter's equality conditions, in INDEXED's order. */
export function probesOf(f: ProbeFilter): Probe[] {
  return INDEXED.flatMap(([name, index, expr]) => {
    const value = f[name];
    return value === undefined ? [] : [{ index, expr, value }];
  });
}

/** Records counted in a probe's index, at most: enough to tell a narrow filter from a wide one, cheap to count. */
const COUNT_CAP = 10_000;

/** A time range of created_at: from (inclusive), to (exclusive), upTo (inclusive; a cursor's). */
export interface TimeRange {
  from?: number;
  to?: number;
  upTo?: number;
}

function timeSql(r: string, t: TimeRange): { sql: string[]; params: Param[] } {
  const sql: string[] = [];
  const params: Param[] = [];
  for (const [op, v] of [
    ['>=', t.from],
    ['<', t.to],
    ['<=', t.upTo],
  ] as const) {
    if (v === undefined) continue;
    sql.push(`${r}.created_at ${op} ?`);
    params.push(v);
  }
  return { sql, params };
}

/**
 * The probes ordered to walk the one of fewest records first: each probe's records in the range counted in its index
 * (no table row read) up to COUNT_CAP, in one statement for all of them.
 */
export async function byFewest(db: Db, probes: readonly Probe[], t: TimeRange): Promise<Probe[]> {
  const counts = probes.map((p) => {
    const w = timeSql('c', t);
    const c = condition(p, 'c');
    return {
      sql: `(SELECT COUNT(*) FROM (SELECT 1 FROM generations c INDEXED BY ${p.index}
        WHERE ${[c.sql, ...w.sql].join(' AND ')} LIMIT ${COUNT_CAP}))`,
      params: [...c.params, ...w.params],
    };
  });
  const row = await db.get<Record<string, unknown>>(
    `SELECT ${counts.map((c, i) => `${c.sql} AS n${i}`).join(', ')}`,
    counts.flatMap((c) => c.params),
  );
  const n = new Map(probes.map((p, i) => [p, Number(row?.[`n${i}`] ?? 0)]));
  // A stable sort: probes of equal counts (both at the cap) keep INDEXED's order.
  return [...probes].sort((a, b) => (n.get(a) ?? 0) - (n.get(b) ?? 0));
}

/**
 * One page's statement: the first probe (of one value) walked newest first within `t`, the others looked up by
 * (value, created_at, rowid) in their indexes, the page's rows (`columns` over the alias g) read by rowid; after a cursor, only rows before
 * (t.upTo, afterId).
 */
export function probeJoin(
  columns: string,
  [walk, ...rest]: readonly [Probe & { value: string }, ...Probe[]],
  t: TimeRange,
  afterId: string | undefined,
  limit: number,
): { sql: string; params: Param[] } {
  const w = timeSql('d', t);
  const where = [`${walk.expr('d')} = ?`, ...w.sql];
  const params: Param[] = [walk.value, ...w.params];
  const joins = rest.map((p, i) => {
    const c = condition(p, `p${i}`);
    where.push(c.sql, `p${i}.created_at = d.created_at`, `p${i}.rowid = d.rowid`);
    params.push(...c.params);
    return `CROSS JOIN generations p${i} INDEXED BY ${p.index}`;
  });
  where.push('g.rowid = d.rowid');
  if (afterId !== undefined && t.upTo !== undefined) {
    where.push('(d.created_at < ? OR g.id < ?)');
    params.push(t.upTo, afterId);
  }
  return {
    sql: `SELECT ${columns} FROM generations d INDEXED BY ${walk.index} ${joins.join(' ')} CROSS JOIN generations g
      WHERE ${where.join(' AND ')} ORDER BY d.created_at DESC, g.id DESC LIMIT ?`,
    params: [...params, limit],
  };
}
