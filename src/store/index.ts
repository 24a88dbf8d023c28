import type { Logger } from 'pino';
import type { StoreConfig, StoreRetention } from '../config/types';
import type { Db } from './db';
import { SqliteDb } from './engine/sqlite-db';
import { migrate } from './migrate';
import { META_UPSERT } from './meta';
import { SweepGate } from './sweep-gate';
import { procedureRegistry } from './procedures';
import { migrations } from './migrations/index';
import { AccountRepo } from './accounts';
import { KeyRepo } from './keys';
import { LedgerRepo } from './ledger';
import { GenerationRepo } from './generations';
import { AuditRepo } from './audit';
import { NO_EXTENSIONS, type StoreExtensions } from './extensions';

export const DEFAULT_GENERATION_RETENTION_DAYS = 90;
/** Eighteen months, as Cloudflare keeps its audit logs. */
export const DEFAULT_AUDIT_RETENTION_DAYS = 548;

/**
 * The Store: one object over the configured database that the rest of the gateway
 * talks to. Repositories the core and several plugins share (accounts, keys, the ledger, generations, the audit
 * log) hang off it
 * and are written once against the Db seam, for SQLite and PostgreSQL alike.
 * `memory` is SQLite in memory: the same code, nothing on disk.
 */
export class Store {
  readonly accounts: AccountRepo;
  readonly keys: KeyRepo;
  readonly ledger: LedgerRepo;
  readonly generations: GenerationRepo;
  readonly audit: AuditRepo;

  /**
   * `extensions`: the plugins' migrations it was brought up to date with and the procedures registered
   * (src/store/extensions.ts).
   */
  constructor(
    readonly db: Db,
    readonly extensions: StoreExtensions = NO_EXTENSIONS,
  ) {
    this.accounts = new AccountRepo(db);
    this.keys = new KeyRepo(db);
    this.ledger = new LedgerRepo(db);
    this.generations = new GenerationRepo(db);
    this.audit = new AuditRepo(db);
  }

  get driver(): Db['dialect'] {
    return this.db.dialect;
  }

  async ping(): Promise<void> {
    const db = this.db as Db & { ping?: () => Promise<void> };
    if (db.ping) await db.ping();
    else await db.get('SELECT 1 AS ok');
  }

  /**
   * Background work of a running gateway: retention (below) and, on PostgreSQL, a log line when
   * the database becomes unreachable and when it answers again.
   */
  maintain(config: StoreRetention, logger: Logger): void {
    this.startRetention(config, (e) => logger.error({ err: e }, 'generation retention sweep failed'));
    this.startAuditRetention(config, (e) => logger.error({ err: e }, 'audit log retention failed'));
    const db = this.db as Db & { onState?: (cause: unknown) => void };
    if (this.driver === 'postgres') {
      db.onState = (cause) => {
        if (cause === null) logger.warn('store available again');
        else
          logger.error(
            { cause: cause instanceof Error ? cause.message : String(cause) },
            'store unavailable: requests are answered 503 until it answers',
          );
      };
    }
  }

  /**
   * Delete what is past its retention, in small batches on a timer so a backlog never stalls
   * requests: generation records older than `generation_retention_days` (0 keeps them). Rounds before the oldest
   * record falls due do nothing (an idle store stays idle). Stored responses expire by the storage plugin's
   * ttl_seconds; the ledger is kept.
   */
  startRetention(config: StoreRetention, onError: (e: unknown) => void, everyMs = 60_000, batch = 1000): void {
    const days = config.generation_retention_days ?? DEFAULT_GENERATION_RETENTION_DAYS;
    if (days === 0 || this.retention) return;
    const keepMs = days * 86_400_000;
    // New records fall due after every record there is: the gate never needs lowering.
    const gate = new SweepGate();
    let busy = false;
    this.retention = setInterval(() => {
      if (busy) return;
      busy = true;
      const now = Date.now();
      gate
        .round(
          now,
          batch,
          () => this.generations.deleteOlderThan(now - keepMs, batch),
          async () => {
            const oldest = await this.generations.oldest();
            return oldest === null ? null : oldest + keepMs;
          },
        )
        .catch(onError)
        .finally(() => (busy = false));
    }, everyMs);
    this.retention.unref();
  }

  private retention: NodeJS.Timeout | undefined;
  private auditRetention: NodeJS.Timeout | undefined;

  /** Audit records older than `audit_retention_days` (0 keeps them) go, once an hour: the log grows slowly. */
  startAuditRetention(config: StoreRetention, onError: (e: unknown) => void, everyMs = 3_600_000): void {
    const days = config.audit_retention_days ?? DEFAULT_AUDIT_RETENTION_DAYS;
    if (days === 0 || this.auditRetention) return;
    const sweep = () => void this.audit.expire(days * 86_400_000).catch(onError);
    this.auditRetention = setInterval(sweep, everyMs);
    this.auditRetention.unref();
  }

  async getMeta(key: string): Promise<string | undefined> {
    const row = await this.db.get<{ value: string }>('SELECT value FROM gateway_meta WHERE key = ?', [key]);
    return row?.value;
  }

  async setMeta(key: string, value: string): Promise<void> {
    await this.db.run(META_UPSERT, [key, value, Date.now()]);
  }

  async close(): Promise<void> {
    clearInterval(this.retention);
    clearInterval(this.auditRetention);
    await this.db.close();
  }
}

/**
 * How this process uses the store: the gateway itself keeps SQLite's redo log, and is the one process that serves
 * a SQLite file (another gateway process on it makes openStore throw StoreFileInUse); a CLI command does neither.
 */
export interface OpenOptions {
  redo?: boolean;
  /** How long SQLite's acknowledged writes wait for their group's commit (tests lengthen it). */
  commitMs?: number;
}

/** The configured database, its procedures (the core's and those of `procedures`, module paths) registered. */
export async function openDb(
  config: StoreConfig,
  opts: OpenOptions = {},
  procedures: readonly string[] = [],
): Promise<Db> {
  switch (config.driver) {
    case 'sqlite':
      return new SqliteDb(config.path, {
        redo: opts.redo,
        commitMs: opts.commitMs,
        idleWorkerMs: config.idle_worker_ms,
        lock: opts.redo === true,
        procedures,
      });
    case 'memory':
      return new SqliteDb(':memory:', { procedures });
    case 'postgres': {
      // Loaded only here: a SQLite configuration never loads pg.

      const { PostgresDb } = require('./engine/postgres-db') as typeof import('./engine/postgres-db');
      return new PostgresDb(
        config.url,
        {
          poolSize: config.pool_size,
          statementTimeoutMs: config.statement_timeout_ms ?? 5000,
          lockTimeoutMs: config.lock_timeout_ms ?? 2000,
          idleInTransactionTimeoutMs: config.idle_in_transaction_timeout_ms ?? 10000,
          connectTimeoutMs: config.connect_timeout_ms ?? 2000,
        },
        procedureRegistry(procedures),
      );
    }
  }
}

/**
 * Open the configured database and bring its schema up to date: the core's migrations and those of `extensions`
 * (the configured chain's plugins': src/store/extensions.ts), whose procedures are registered.
 */
export async function openStore(
  config: StoreConfig,
  opts: OpenOptions = {},
  extensions: StoreExtensions = NO_EXTENSIONS,
): Promise<Store> {
  const db = await openDb(config, opts, extensions.procedures);
  await migrate(db, [...migrations, ...extensions.migrations]);
  // The gateway's own process answers settlements from the main thread's ahead log (src/store/engine/ahead-log.ts).
  if (opts.redo && db instanceof SqliteDb) await db.startAhead();
  return new Store(db, extensions);
}
