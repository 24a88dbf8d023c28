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

export interface Db {
  readonly dialect: Dialect;
  all<T = Record<string, unknown>>(sql: Sql, params?: readonly Param[]): Promise<T[]>;
  get<T = Record<string, unknown>>(sql: Sql, params?: readonly Param[]): Promise<T | undefined>;
  run(sql: Sql, params?: readonly Param[]): Promise<RunResult>;
  /** Several statements, no parameters (migrations). */
  exec(sql: Sql): Promise<void>;
  /** Run fn inside one transaction; it commits when fn resolves and rolls back when it throws. */
  tx<T>(fn: (db: Db) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export function pick(sql: Sql, dialect: Dialect): string {
  return typeof sql === 'string' ? sql : sql[dialect];
}
