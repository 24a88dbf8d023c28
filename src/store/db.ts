/**
 * The SQL seam the Store is written against, so that every repository is written once
 * for SQLite and PostgreSQL alike. SQL uses `?` placeholders; the PostgreSQL driver
 * numbers them. Statements the two dialects spell differently take a `{sqlite, postgres}` pair.
 */
export type Dialect = 'sqlite' | 'postgres';

export type Sql = string | { sqlite: string; postgres: string };

export type Param = string | number | bigint | boolean | null;

export interface RunResult {
  changes: number;
}

/** Told of every statement's duration (seconds) and whether it failed, when set (metrics). */
export type DbObserver = (op: 'all' | 'get' | 'run' | 'exec' | 'tx', seconds: number, failed: boolean) => void;

export interface Db {
  readonly dialect: Dialect;
  observer?: DbObserver;
  all<T = Record<string, unknown>>(sql: Sql, params?: readonly Param[]): Promise<T[]>;
  get<T = Record<string, unknown>>(sql: Sql, params?: readonly Param[]): Promise<T | undefined>;
  run(sql: Sql, params?: readonly Param[]): Promise<RunResult>;
  /** A single write that may be committed together with others (SQLite group commit); resolves once durable. */
  write(sql: Sql, params?: readonly Param[]): Promise<RunResult>;
  /** Several statements, no parameters (migrations). */
  exec(sql: Sql): Promise<void>;
  /** Run fn inside one transaction; it commits when fn resolves and rolls back when it throws. */
  tx<T>(fn: (db: Db) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export function pick(sql: Sql, dialect: Dialect): string {
  return typeof sql === 'string' ? sql : sql[dialect];
}

/** Time one store operation for the observer, if any. */
export async function observed<T>(db: { observer?: DbObserver }, op: Parameters<DbObserver>[0], fn: () => Promise<T> | T): Promise<T> {
  const o = db.observer;
  if (!o) return fn();
  const t = performance.now();
  try {
    const out = await fn();
    o(op, (performance.now() - t) / 1000, false);
    return out;
  } catch (e) {
    o(op, (performance.now() - t) / 1000, true);
    throw e;
  }
}
