import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { observed, pick, type Db, type DbObserver, type Param, type RunResult, type Sql } from './db';

type Statement = Database.Statement<unknown[]>;

/**
 * better-sqlite3 behind the async Db seam. SQLite runs one statement at a time on one
 * connection, so a transaction holds a lock that other callers wait for; statements
 * outside a transaction run at once when no transaction is open.
 */
export class SqliteDb implements Db {
  readonly dialect = 'sqlite' as const;
  observer?: DbObserver;
  private readonly db: Database.Database;
  private readonly cache = new Map<string, Statement>();
  private lock: Promise<void> | null = null;

  constructor(path: string) {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
    this.db.pragma('busy_timeout = 5000');
    if (path !== ':memory:') {
      // Checkpoint on a timer rather than inside whichever commit crosses 1000 WAL pages:
      // measured on a request's store work (reserve, settle, record, response) this takes
      // the mean from about 225 to 155 us, the checkpoint's fsync paid once a second.
      this.db.pragma('wal_autocheckpoint = 0');
      this.checkpointer = setInterval(() => {
        if (!this.lock && this.db.open) this.db.pragma('wal_checkpoint(PASSIVE)');
      }, 1000);
      this.checkpointer.unref();
    }
  }

  private checkpointer: NodeJS.Timeout | undefined;

  /** The raw connection, for the few places (integrity checks, tests) that need it. */
  get raw(): Database.Database {
    return this.db;
  }

  private stmt(sql: Sql): Statement {
    const text = pick(sql, 'sqlite');
    let s = this.cache.get(text);
    if (!s) {
      s = this.db.prepare(text);
      this.cache.set(text, s);
    }
    return s;
  }

  private async idle(): Promise<void> {
    while (this.lock) await this.lock;
  }

  async all<T>(sql: Sql, params: readonly Param[] = []): Promise<T[]> {
    if (this.lock) await this.idle();
    return observed(this, 'all', () => this.stmt(sql).all(...toSqlite(params)) as T[]);
  }

  async get<T>(sql: Sql, params: readonly Param[] = []): Promise<T | undefined> {
    if (this.lock) await this.idle();
    return observed(this, 'get', () => this.stmt(sql).get(...toSqlite(params)) as T | undefined);
  }

  async run(sql: Sql, params: readonly Param[] = []): Promise<RunResult> {
    if (this.lock) await this.idle();
    return observed(this, 'run', () => ({ changes: this.stmt(sql).run(...toSqlite(params)).changes }));
  }

  async exec(sql: Sql): Promise<void> {
    if (this.lock) await this.idle();
    this.db.exec(pick(sql, 'sqlite'));
  }

  tx<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    return observed(this, 'tx', () => this.transaction(fn));
  }

  write(sql: Sql, params: readonly Param[] = []): Promise<RunResult> {
    return this.tx((t) => t.run(sql, params));
  }

  private pending: Array<{ fn: (db: Db) => Promise<unknown>; resolve: (v: unknown) => void; reject: (e: unknown) => void }> = [];
  private flushScheduled = false;

  /**
   * Group commit: transactions begun in the same turn of the event loop run one after
   * another inside one BEGIN ... COMMIT, each in its own savepoint (so each commits or
   * rolls back whole, as before), and every caller is answered after the one COMMIT.
   * Nothing is acknowledged before it is committed; there is one WAL commit per batch
   * instead of one per transaction.
   */
  private transaction<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    this.flushScheduled = false;
    const batch = this.pending.splice(0);
    await this.idle();
    let release!: () => void;
    this.lock = new Promise<void>((r) => (release = r));
    const inner = new SqliteTx(this);
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      this.db.exec('BEGIN IMMEDIATE');
      for (const item of batch) {
        this.db.exec('SAVEPOINT item');
        try {
          const value = await item.fn(inner);
          this.db.exec('RELEASE item');
          outcomes.push({ ok: true, value });
        } catch (error) {
          this.db.exec('ROLLBACK TO item');
          this.db.exec('RELEASE item');
          outcomes.push({ ok: false, error });
        }
      }
      this.db.exec('COMMIT');
    } catch (e) {
      // The batch could not commit: nobody in it is told success.
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      outcomes.length = 0;
      for (let i = 0; i < batch.length; i++) outcomes.push({ ok: false, error: e });
    } finally {
      this.lock = null;
      release();
    }
    batch.forEach((item, i) => {
      const o = outcomes[i];
      if (o.ok) item.resolve(o.value);
      else item.reject(o.error);
    });
  }

  /** Statements issued by the transaction holder itself skip the lock. */
  runLocked(kind: 'all' | 'get' | 'run', sql: Sql, params: readonly Param[]): unknown {
    const s = this.stmt(sql);
    const p = toSqlite(params);
    if (kind === 'all') return s.all(...p);
    if (kind === 'get') return s.get(...p);
    return { changes: s.run(...p).changes };
  }

  async close(): Promise<void> {
    await this.idle();
    clearInterval(this.checkpointer);
    if (this.db.open) this.db.close();
  }
}

class SqliteTx implements Db {
  readonly dialect = 'sqlite' as const;
  constructor(private readonly owner: SqliteDb) {}
  write(sql: Sql, params: readonly Param[] = []): Promise<RunResult> {
    return this.run(sql, params);
  }
  async all<T>(sql: Sql, params: readonly Param[] = []): Promise<T[]> {
    return this.owner.runLocked('all', sql, params) as T[];
  }
  async get<T>(sql: Sql, params: readonly Param[] = []): Promise<T | undefined> {
    return this.owner.runLocked('get', sql, params) as T | undefined;
  }
  async run(sql: Sql, params: readonly Param[] = []): Promise<RunResult> {
    return this.owner.runLocked('run', sql, params) as RunResult;
  }
  async exec(sql: Sql): Promise<void> {
    this.owner.raw.exec(pick(sql, 'sqlite'));
  }
  tx<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    return fn(this); // already inside one
  }
  async close(): Promise<void> {
    throw new Error('close() inside a transaction');
  }
}

function toSqlite(params: readonly Param[]): unknown[] {
  return params.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p));
}
