import { Client, Pool, type PoolClient, type PoolConfig, type QueryConfig } from 'pg';
import { errors } from '../../errors';
import {
  addObserver,
  callNested,
  driveAsync,
  observed,
  pick,
  Rollback,
  type Db,
  type DbObserver,
  type Param,
  type Proc,
  type RunResult,
  type SendRound,
  type Sql,
} from '../db';
import { inlineParams } from './postgres-literals';

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
/** What pg answers for each statement of a message. */
type QueryResultLike = { rows: Array<Record<string, unknown>> };

async function query<T>(q: Queryable, sql: Sql, params: readonly Param[]): Promise<{ rows: T[]; rowCount: number }> {
  const r = await q.query(numberPlaceholders(pick(sql, 'postgres')), params as Param[]);
  return { rows: r.rows as T[], rowCount: r.rowCount ?? 0 };
}

export interface PostgresOptions {
  poolSize: number;
  /** Server-side bound on one statement (ms); the client gives up one second later. */
  statementTimeoutMs: number;
  /** How long a statement waits for a row lock (ms). */
  lockTimeoutMs: number;
  /** The server ends a session left idle inside a transaction this long (ms). */
  idleInTransactionTimeoutMs: number;
  /** Connecting, and waiting for a pooled connection (ms). */
  connectTimeoutMs: number;
}

/** The application_name of every session, so operators (and tests) can find the gateway's backends. */
export const APPLICATION_NAME = 'model-gateway';

/** pg's own messages for a connection that is gone or never came. */
const LOST_CONNECTION = new RegExp(
  [
    'Connection terminated',
    'Query read timeout',
    'timeout exceeded when trying to connect',
    'Client has encountered a connection error',
    'not queryable',
    'connection timeout',
  ].join('|'),
  'i',
);

/** SQLSTATE classes and socket errors that mean "the database is not reachable", not "this statement failed". */
export function isConnectionError(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    if (/^(08|57P0[1-3]|53300)/.test(code)) return true;
    if (/^E(CONNREFUSED|CONNRESET|PIPE|TIMEDOUT|HOSTUNREACH|NETUNREACH|AI_AGAIN)$/.test(code)) return true;
  }
  const message = e instanceof Error ? e.message : '';
  return LOST_CONNECTION.test(message);
}

/** query_timeout per query is honoured by pg though its types do not list it. */
const PING = { text: 'SELECT 1', query_timeout: 1000 } as QueryConfig;

/**
 * How long safe work is repeated on fresh connections after its connection was lost, while the database still answers.
 */
const RETRY_WINDOW_MS = 10_000;

/** An error the server itself sent (it carries a SQLSTATE), as opposed to silence or a refused socket. */
function serverAnswered(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith('08');
}

const BACKOFF_MIN_MS = 100;
const BACKOFF_MAX_MS = 5000;

/**
 * pg's pool behind the Db seam, built to outlive its database: every client has an 'error'
 * handler (idle and checked-out alike), each session carries statement, lock and
 * idle-in-transaction timeouts, and a lost connection marks the store unavailable. While it is,
 * every call fails at once with `store_unavailable` (503, Retry-After) instead of hanging, and a
 * probe reconnects with backoff; the first probe that answers makes the store available again.
 * Work that is safe to repeat (reads, write(), procedures marked idempotent, transactions that
 * never reached COMMIT) is repeated (for up to RETRY_WINDOW_MS) on a fresh connection when its connection was lost.
 * No transaction is held open across an await on anything but the database: procedures
 * yield only statements.
 */
export class PostgresDb implements Db {
  readonly dialect = 'postgres' as const;
  observer?: DbObserver;
  private readonly pool: Pool;
  private downSince: number | null = null;
  private probing = false;
  private closed = false;
  private backoffMs = BACKOFF_MIN_MS;
  /** Told when the store becomes unavailable (with the cause) and available again (null). */
  onState?: (cause: unknown) => void;

  private readonly config: PoolConfig;

  /**
   * `procs`: the procedures registered (src/store/procedures.ts). They run here, statement by statement, but a call
   * of one not registered fails as it does on SQLite, whose worker finds procedures only by name.
   */
  constructor(
    url: string,
    private readonly opts: PostgresOptions,
    private readonly procs: ReadonlyMap<string, Proc<unknown, unknown>> = new Map(),
  ) {
    this.config = {
      connectionString: url,
      max: opts.poolSize,
      application_name: APPLICATION_NAME,
      statement_timeout: opts.statementTimeoutMs,
      lock_timeout: opts.lockTimeoutMs,
      idle_in_transaction_session_timeout: opts.idleInTransactionTimeoutMs,
      query_timeout: opts.statementTimeoutMs + 1000,
      connectionTimeoutMillis: opts.connectTimeoutMs,
      keepAlive: true,
    };
    this.pool = new Pool(this.config);
    // An idle client's error (restart, terminated backend): the pool drops it; the store checks the database.
    this.pool.on('error', (e) => this.lost(e));
    // A checked-out client's error would otherwise be unhandled and end the process.
    this.pool.on('connect', (client) => client.on('error', (e) => this.lost(e)));
  }

  /** True while the database is known to be unreachable. */
  get unavailable(): boolean {
    return this.downSince !== null;
  }

  private lost(e: unknown): void {
    if (!this.closed && isConnectionError(e)) void this.probe();
  }

  /**
   * Check the database on a connection of its own, at once and then with backoff until it
   * answers. Only a failed check marks the store unavailable: one terminated backend does not.
   */
  private async probe(): Promise<void> {
    if (this.probing) return;
    this.probing = true;
    try {
      for (;;) {
        if (this.closed) return;
        const client = new Client({ ...this.config, query_timeout: Math.min(this.opts.connectTimeoutMs, 1000) });
        client.on('error', () => undefined);
        try {
          // The server completing a handshake is the answer sought: the session may be terminated right after.
          await client.connect();
          if (this.downSince !== null) this.onState?.(null);
          this.downSince = null;
          this.backoffMs = BACKOFF_MIN_MS;
          return;
        } catch (e) {
          // The server said why it refused (e.g. this session terminated at once, too many clients): it answers.
          if (serverAnswered(e)) return void (this.backoffMs = BACKOFF_MIN_MS);
          if (this.downSince === null) {
            this.downSince = Date.now();
            this.onState?.(e);
          }
        } finally {
          void client.end().catch(() => undefined);
        }
        await new Promise((r) => setTimeout(r, this.backoffMs).unref());
        this.backoffMs = Math.min(BACKOFF_MAX_MS, this.backoffMs * 2);
      }
    } finally {
      this.probing = false;
    }
  }

  private unavailableError() {
    return errors.storeUnavailable(Math.max(1, Math.ceil(this.backoffMs / 1000)));
  }

  /**
   * Run `fn`, failing at once while the store is unavailable. When its connection is lost, the
   * database is checked, and `fn` runs again on a fresh connection if `safe` says repeating
   * it cannot apply it twice.
   */
  private async attempt<T>(fn: (mark: () => void) => Promise<T>, safe: (committing: boolean) => boolean): Promise<T> {
    const until = Date.now() + RETRY_WINDOW_MS;
    for (let tries = 0; ; tries++) {
      if (this.downSince !== null) throw this.unavailableError();
      let committing = false;
      try {
        return await fn(() => (committing = true));
      } catch (e) {
        if (!isConnectionError(e)) throw e;
        this.lost(e);
        if (Date.now() >= until || !safe(committing)) throw this.unavailableError();
        // Terminated sessions (a failover, a restart) come back at once; a dead database is marked down by the probe
        // and ends this loop.
        await new Promise((r) => setTimeout(r, Math.min(100, 5 * (tries + 1))));
      }
    }
  }

  /** A short check for /ready: fails at once while unavailable, within a second or two when the database is silent. */
  async ping(): Promise<void> {
    await this.attempt(
      () => this.pool.query(PING),
      () => true,
    );
  }

  all<T>(sql: Sql, params: readonly Param[] = []): Promise<T[]> {
    return observed(this, 'all', () =>
      this.attempt(
        async () => (await query<T>(this.pool, sql, params)).rows,
        () => true,
      ),
    );
  }
  get<T>(sql: Sql, params: readonly Param[] = []): Promise<T | undefined> {
    return observed(this, 'get', () =>
      this.attempt(
        async () => (await query<T>(this.pool, sql, params)).rows[0],
        () => true,
      ),
    );
  }
  run(sql: Sql, params: readonly Param[] = []): Promise<RunResult> {
    return observed(this, 'run', () =>
      this.attempt(
        async () => ({ changes: (await query(this.pool, sql, params)).rowCount }),
        () => false,
      ),
    );
  }
  async exec(sql: Sql): Promise<void> {
    await this.attempt(
      () => this.pool.query(pick(sql, 'postgres')),
      () => false,
    );
  }
  /** Repeated once when the connection is lost, so it must be idempotent (an upsert). */
  write(sql: Sql, params: readonly Param[] = []): Promise<RunResult> {
    return observed(this, 'run', () =>
      this.attempt(
        async () => ({ changes: (await query(this.pool, sql, params)).rowCount }),
        () => true,
      ),
    );
  }
  /** fn may await only the database; it is not repeated (it may have effects outside it). */
  tx<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    return observed(this, 'tx', () =>
      this.attempt(
        (mark) => this.transaction(fn, mark),
        () => false,
      ),
    );
  }
  /**
   * A transaction lost before COMMIT was sent left nothing behind: it runs again; after, only an idempotent one does.
   */
  call<A, R>(proc: Proc<A, R>, args: A): Promise<R> {
    return observed(this, 'tx', async () => {
      if (!this.procs.has(proc.name)) throw new Error(`unknown store procedure '${proc.name}'`);
      try {
        return await this.attempt(
          (mark) => this.transaction((t) => driveAsync(proc, args, t), mark),
          (committing) => !committing || proc.idempotent === true,
        );
      } catch (e) {
        if (e instanceof Rollback) return e.value as R;
        throw e;
      }
    });
  }

  rounds<T>(fn: (send: SendRound) => Promise<T>, idempotent: boolean): Promise<T> {
    return observed(this, 'tx', () =>
      this.attempt(
        (mark) => this.inRounds(fn, mark),
        (committing) => !committing || idempotent,
      ),
    );
  }

  private async inRounds<T>(fn: (send: SendRound) => Promise<T>, beforeCommit: () => void): Promise<T> {
    const client = await this.pool.connect();
    let state = 'none' as 'none' | 'open' | 'ended';
    let broken: Error | undefined;
    const send: SendRound = async (steps, commit = false) => {
      if (state === 'ended') throw new Error('rounds: a message sent after its transaction ended');
      const texts = steps.map((s) => inlineParams(pick(s.sql, 'postgres'), s.params));
      const skip = state === 'none' ? 1 : 0;
      if (skip) texts.unshift('BEGIN');
      if (commit) {
        beforeCommit();
        texts.push('COMMIT');
      }
      state = 'open';
      const r = (await client.query(texts.join(';\n'))) as unknown as QueryResultLike | QueryResultLike[];
      if (commit) state = 'ended';
      return (Array.isArray(r) ? r : [r]).slice(skip, skip + steps.length).map((x) => x.rows);
    };
    try {
      const value = await fn(send);
      if (state === 'open') await send([], true);
      return value;
    } catch (e) {
      if (isConnectionError(e)) broken = e as Error;
      // After an error inside a message its transaction is aborted, whatever the message held (even its COMMIT).
      else if (state !== 'none') await client.query('ROLLBACK').catch((r: unknown) => (broken = r as Error));
      throw e;
    } finally {
      client.release(broken ?? false);
    }
  }

  private async transaction<T>(fn: (db: Db) => Promise<T>, beforeCommit: () => void): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const value = await fn(new PostgresTx(client));
      beforeCommit();
      await client.query('COMMIT');
      return value;
    } catch (e) {
      if (isConnectionError(e)) broken = e as Error;
      else await client.query('ROLLBACK').catch((r: unknown) => (broken = r as Error));
      throw e;
    } finally {
      // A client whose connection failed is destroyed, never handed out again.
      client.release(broken ?? false);
    }
  }

  observe(fn: DbObserver): () => void {
    return addObserver(this, fn);
  }

  async close(): Promise<void> {
    this.closed = true;
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
  observe(): () => void {
    throw new Error('observe() inside a transaction');
  }
  async close(): Promise<void> {
    throw new Error('close() inside a transaction');
  }
}
