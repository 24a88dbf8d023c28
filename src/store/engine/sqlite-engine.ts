import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { Proc } from '../db';
import { AheadRun } from './ahead-run';
import { replayLogs } from './engine-replay';
import { EntryRunner } from './entry-runner';
import { HoldBook } from './holds';
import { Checkpoints } from './sqlite-checkpoints';
import { RedoLog, type RedoEntry } from './redo-log';
import { COMMIT_MS, failed, info } from './engine-protocol';
import type { EngineOptions, EngineReply, EngineRequest, EngineStatus } from './engine-protocol';
import { GroupCommit, type Reply } from './group-commit';

type Statement = Database.Statement<unknown[]>;

/**
 * The SQLite connection and everything that touches the disk: group commit, procedures,
 * transactions driven from the main thread, WAL checkpoints. It runs in the store's worker
 * thread (./sqlite-worker.ts) for a file database, and in-thread for `memory`.
 *
 * Writes and procedures that arrive in the same turn share one BEGIN ... COMMIT, each failing
 * alone (savepoints), and every one is answered once committed or logged (./group-commit.ts): nothing is
 * acknowledged before. A file database reads through a second, read-only connection, so reads never wait for a
 * transaction.
 */
export class SqliteEngine {
  private readonly db: Database.Database;
  private readonly reader: Database.Database | null;
  private readonly writes = new Map<string, Statement>();
  private readonly reads = new Map<string, Statement>();
  /** A transaction driven statement by statement from the main thread is open. */
  private inTx = false;
  private deferred: Array<() => void> = [];
  /** The WAL's checkpoints (file databases). */
  private readonly checkpoints: Checkpoints | null = null;
  /** Credit reservations, held here rather than as rows (read in SQL as gw_held(scope, id)). */
  private readonly holds = new HoldBook();
  private readonly redo: RedoLog | null;
  /** Runs the statements and procedures asked, and those a redo log replays. */
  private readonly entries: EntryRunner;
  /** Queued writes and procedures, run and committed together. */
  private readonly group: GroupCommit;
  /** What this engine has run of the main thread's ahead log. */
  private readonly ahead: AheadRun;
  /** The procedures that fold what row triggers stage (Proc.foldsStaged). */
  private readonly folds: Array<Proc<unknown, unknown>>;

  constructor(
    path: string,
    private readonly procs: ReadonlyMap<string, Proc<unknown, unknown>>,
    opts: EngineOptions = {},
  ) {
    const file = path !== ':memory:';
    if (file) mkdirSync(dirname(path), { recursive: true });
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('foreign_keys = ON');
    this.db.pragma('busy_timeout = 5000');
    // The statement journal of each item's savepoint (a settlement touches ~20 pages, above the 64 KiB at which
    // SQLite spills it) stays in memory rather than becoming a temp file created and unlinked per request.
    this.db.pragma('temp_store = MEMORY');
    this.defineFunctions(this.db);
    const prepare = (sql: string) => this.prepared(this.db, sql);
    this.folds = [...procs.values()].filter((p) => p.foldsStaged !== undefined);
    this.entries = new EntryRunner(procs, this.holds, prepare);
    this.ahead = new AheadRun(this.db, opts.aheadCommitted);
    this.redo = file && opts.redo ? RedoLog.open(path) : null;
    const group = new GroupCommit(this.db, {
      entries: this.entries,
      holds: this.holds,
      redo: this.redo,
      ahead: this.ahead,
      commitMs: opts.commitMs ?? COMMIT_MS,
      prepare,
      inTx: () => this.inTx,
      fold: () => this.foldStaged(),
      committed: () => this.checkpoints?.committed(),
      fatal:
        opts.fatal ??
        ((e) => {
          throw e;
        }),
    });
    this.group = group;
    if (this.redo) {
      const engine = {
        db: this.db,
        entries: this.entries,
        holds: this.holds,
        ahead: this.ahead,
        fold: () => this.foldStaged(),
      };
      group.seq = replayLogs({ ...engine, inSavepoint: (w) => group.inSavepoint(w) }, this.redo, path);
    }
    if (file) {
      this.checkpoints = new Checkpoints(this.db, path, {
        canCommit: () => !this.inTx,
        commitNow: () => group.commitNow(),
        connectionIdle: () => !this.inTx && !group.batchOpen,
      });
      this.reader = new Database(path, { readonly: true });
      this.reader.pragma('busy_timeout = 5000');
      this.defineFunctions(this.reader);
    } else {
      this.reader = null;
    }
  }

  /** gw_held('account' | 'key', id): the nano-credits held against it (a REAL, exact below 2^53). */
  private defineFunctions(conn: Database.Database): void {
    conn.function('gw_held', { deterministic: false, directOnly: true }, (scope: unknown, id: unknown) =>
      typeof id === 'string' && (scope === 'account' || scope === 'key') ? this.holds.held(scope, id) : 0,
    );
  }

  /** A transaction driven statement by statement from the main thread is open (what else comes waits for its end). */
  get drivenTxOpen(): boolean {
    return this.inTx;
  }

  /** Everything queued waits for a timer (acknowledged from the ahead log): the worker answers its message at once. */
  get waitingForTimer(): boolean {
    return this.group.waitingForTimer;
  }

  handle(req: EngineRequest, reply: Reply): void {
    switch (req.op) {
      case 'read':
        if (!this.reader && this.inTx) this.deferred.push(() => this.handle(req, reply));
        else {
          if (this.group.queuedAhead > 0) this.group.flush(); // acknowledged from the ahead log: the read must see it
          this.group.commitNow(); // the reader sees what was acknowledged
          this.answer(reply, () => this.prepared(this.reader ?? this.db, req.sql)[req.kind](...req.params));
        }
        return;
      case 'write':
        return this.group.enqueue(reply, { sql: req.sql, params: req.params });
      case 'proc': {
        const proc = this.procs.get(req.name);
        if (!proc) return reply({ ok: false, error: { message: `unknown store procedure '${req.name}'` } });
        // A packed procedure (Proc.wire) is logged packed, and unpacked where it runs, as in a replay.
        if (req.ahead !== undefined && req.ahead <= this.ahead.last) return reply({ ok: true, value: null }); // ran
        const args: unknown = req.text !== undefined ? JSON.parse(req.text) : req.args;
        const entry: RedoEntry = proc.wire
          ? { proc: req.name, packed: args as unknown[], ...(req.ahead ? { ahead: req.ahead } : {}) }
          : { proc: req.name, args };
        if (!proc.readOnly) return this.group.enqueue(reply, entry);
        if (this.inTx) this.deferred.push(() => this.handle(req, reply));
        else this.runAtOnce(entry, reply);
        return;
      }
      case 'exec':
        if (this.inTx) this.deferred.push(() => this.handle(req, reply));
        else {
          this.group.commitNow();
          this.answer(reply, () => {
            this.db.exec(req.sql);
            this.foldAlone();
          });
        }
        return;
      case 'begin':
        if (this.inTx) return reply({ ok: false, error: { message: 'a transaction is already open' } });
        this.group.flush(); // what was queued commits before, not inside, this transaction
        this.group.commitNow();
        this.answer(reply, () => {
          this.db.exec('BEGIN IMMEDIATE');
          this.inTx = true;
        });
        return;
      case 'stmt':
        this.answer(reply, () => {
          if (req.kind === 'exec') return void this.db.exec(req.sql);
          const s = this.prepared(this.db, req.sql);
          return req.kind === 'run' ? { changes: s.run(...req.params).changes } : s[req.kind](...req.params);
        });
        return;
      case 'end':
        this.answer(reply, () => {
          this.inTx = false;
          if (!this.db.inTransaction) return;
          if (req.commit) this.foldOrRollBack();
          this.db.exec(req.commit ? 'COMMIT' : 'ROLLBACK');
          if (req.commit) this.checkpoints?.committed();
        });
        for (const d of this.deferred.splice(0)) d();
        this.group.schedule();
        return;
      case 'status':
        return reply({
          ok: true,
          value: {
            checkpointer: this.checkpoints?.threadRunning ?? false,
            holds: this.holds.count(),
            redo: this.redo !== null,
            ahead: this.ahead.last,
          } satisfies EngineStatus,
        });
      case 'close':
        this.answer(reply, () => this.close());
    }
  }

  private answer(reply: Reply, fn: () => unknown): void {
    try {
      reply({ ok: true, value: fn() });
    } catch (e) {
      reply({ ok: false, error: info(e) });
    }
  }

  private prepared(conn: Database.Database, sql: string): Statement {
    const cache = conn === this.db ? this.writes : this.reads;
    let s = cache.get(sql);
    if (!s) {
      s = conn.prepare(sql);
      cache.set(sql, s);
    }
    return s;
  }

  /** Whether a fold's staging table has a row (false while it does not exist: its migration has not run yet). */
  private staged(fold: Proc<unknown, unknown>): boolean {
    try {
      return this.prepared(this.db, `SELECT 1 FROM ${fold.foldsStaged} LIMIT 1`).get() !== undefined;
    } catch (e) {
      if (/no such table/.test((e as Error).message)) return false;
      throw e;
    }
  }

  /** Fold what row triggers staged (Proc.foldsStaged) within the open transaction; a check a fold when none did. */
  private foldStaged(): void {
    for (const f of this.folds) if (this.staged(f)) this.entries.fold(f);
  }

  /** foldStaged before a driven transaction commits; if it fails, the transaction is rolled back and the error goes on. */
  private foldOrRollBack(): void {
    try {
      this.foldStaged();
    } catch (e) {
      this.db.exec('ROLLBACK');
      throw e;
    }
  }

  /** After a statement run outside any transaction: what it staged is folded in a transaction of its own. */
  private foldAlone(): void {
    if (!this.folds.some((f) => this.staged(f))) return;
    this.db.exec('BEGIN IMMEDIATE');
    this.foldOrRollBack();
    this.db.exec('COMMIT');
  }

  /** A procedure that writes nothing: it runs now, outside any transaction, and its holds stand unless it throws. */
  private runAtOnce(entry: RedoEntry, reply: Reply): void {
    let out: EngineReply;
    this.holds.dataVersion = null; // another process may have committed since the last turn
    try {
      out = { ok: true, value: this.entries.run(entry) };
      this.holds.keep();
    } catch (e) {
      this.holds.undo();
      out = failed(e);
    }
    reply(out);
  }

  private close(): void {
    this.checkpoints?.close();
    this.group.flush();
    this.group.commitNow();
    this.redo?.close();
    if (!this.db.open) return;
    if (this.reader) {
      this.reader.close();
      this.db.pragma('wal_checkpoint(TRUNCATE)');
    }
    this.db.close();
  }
}
