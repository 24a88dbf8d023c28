import { Pool, type PoolClient } from 'pg';
import { callInTx, callNested, observed, pick, type Db, type Proc, type DbObserver, type Param, type RunResult, type Sql } from './db';

/** `?` placeholders become `$1..$n` (outside quoted strings), converted once per statement text. */
const converted = new Map<string, string>();
export function numberPlaceholders(sql: string): string {
  let out = converted.get(sql);
  if (out === undefined) {
    let n = 0;
    let quoted = false;
    out = '';
    for (const ch of sql) {
      if (ch === "'") quoted = !quoted;
      out += ch === '?' && !quoted ? `$${++n}` : ch;
    }
    converted.set(sql, out);
  }
  return out;
}

type Queryable = Pool | PoolClient;

async function query<T>(q: Queryable, sql: Sql, params: readonly Param[]): Promise<{ rows: T[]; rowCount: number }> {
  const r = await q.query(numberPlaceholders(pick(sql, 'postgres')), params as Param[]);
  return { rows: r.rows as T[], rowCount: r.rowCount ?? 0 };
}

/** pg's pool behind the Db seam, for several gateway replicas on one database. */
export class PostgresDb implements Db {
  readonly dialect = 'postgres' as const;
  observer?: DbObserver;
  private readonly pool: Pool;

  constructor(url: string, size: number) {
    this.pool = new Pool({ connectionString: url, max: size });
    // An idle client's error (server restart) must not crash the process; the next query reconnects.
    this.pool.on('error', () => undefined);
  }

  async all<T>(sql: Sql, params: readonly Param[] = []): Promise<T[]> {
    return observed(this, 'all', async () => (await query<T>(this.pool, sql, params)).rows);
  }
  async get<T>(sql: Sql, params: readonly Param[] = []): Promise<T | undefined> {
    return observed(this, 'get', async () => (await query<T>(this.pool, sql, params)).rows[0]);
  }
  async run(sql: Sql, params: readonly Param[] = []): Promise<RunResult> {
    return observed(this, 'run', async () => ({ changes: (await query(this.pool, sql, params)).rowCount }));
  }
  async exec(sql: Sql): Promise<void> {
    await this.pool.query(pick(sql, 'postgres'));
  }
  write(sql: Sql, params: readonly Param[] = []): Promise<RunResult> {
    return this.run(sql, params);
  }
  tx<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    return observed(this, 'tx', () => this.transaction(fn));
  }
  call<A, R>(proc: Proc<A, R>, args: A): Promise<R> {
    return callInTx(this, proc, args);
  }

  private async transaction<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const out = await fn(new PostgresTx(client));
      await client.query('COMMIT');
      return out;
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw e;
    } finally {
      client.release();
    }
  }
  async close(): Promise<void> {
    await this.pool.end();
  }
}

class PostgresTx implements Db {
  readonly dialect = 'postgres' as const;
  constructor(private readonly client: PoolClient) {}
  async all<T>(sql: Sql, params: readonly Param[] = []): Promise<T[]> {
    return (await query<T>(this.client, sql, params)).rows;
  }
  async get<T>(sql: Sql, params: readonly Param[] = []): Promise<T | undefined> {
    return (await query<T>(this.client, sql, params)).rows[0];
  }
  async run(sql: Sql, params: readonly Param[] = []): Promise<RunResult> {
    return { changes: (await query(this.client, sql, params)).rowCount };
  }
  async exec(sql: Sql): Promise<void> {
    await this.client.query(pick(sql, 'postgres'));
  }
  write(sql: Sql, params: readonly Param[] = []): Promise<RunResult> {
    return this.run(sql, params);
  }
  tx<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    return fn(this);
  }
  call<A, R>(proc: Proc<A, R>, args: A): Promise<R> {
    return callNested(this, proc, args);
  }
  async close(): Promise<void> {
    throw new Error('close() inside a transaction');
  }
}
