import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { Proc } from './db';
import { AheadRun } from './ahead-run';
import { replayLogs } from './engine-replay';
import { EntryRunner } from './entry-runner';
import { HoldBook } from './holds';
import { Checkpoints } from './sqlite-checkpoints';
import { REDO_MARK, RedoLog, type RedoEntry } from './redo-log';
import { COMMIT_MS, failed, info } from './engine-protocol';
import type { EngineOptions, EngineReply, EngineRequest, EngineStatus } from './engine-protocol';

type Reply = (r: EngineReply) => void;
/** How long writes acknowledged from the ahead log may wait to run together (ms). */
const AHEAD_FLUSH_MS = 5;
type Statement = Database.Statement<unknown[]>;
/** A write waiting for the next flush: who waits for its answer, and what it is (as the redo log keeps it). */
interface Queued {
  reply: Reply;
  redo: RedoEntry;
}

/**
 * The SQLite connection and everything that touches the disk: group commit, procedures,
 * transactions driven from the main thread, WAL checkpoints. It runs in the store's worker
 * thread (src/store/sqlite-worker.ts) for a file database, and in-thread for `memory`.
 *
 * Writes and procedures that arrive in the same turn share one BEGIN ... COMMIT, each failing
 * alone (savepoints), and every one is answered after the COMMIT: nothing is acknowledged
 * before it is committed. A file database reads through a second, read-only connection,
 * so reads never wait for a transaction.
 */
export class SqliteEngine {
  private readonly db: Database.Database;
  private readonly reader: Database.Database | null;
  private readonly writes = new Map<string, Statement>();
  private readonly reads = new Map<string, Statement>();
  private queue: Queued[] = [];
  private scheduled = false;
  private aheadTimer: NodeJS.Timeout | undefined;
  /** A transaction driven statement by statement from the main thread is open. */
  private inTx = false;
  private deferred: Array<() => void> = [];
  /** The WAL's checkpoints (file databases). */
  private readonly checkpoints: Checkpoints | null = null;
  /** Credit reservations, held here rather than as rows (read in SQL as gw_held(scope, id)). */
  private readonly holds = new HoldBook();
  private readonly begin: Statement;
  private readonly commit: Statement;
  private readonly rollback: Statement;
  private readonly savepoint: Statement;
  private readonly release: Statement;
  private readonly rollbackTo: Statement;
  /** The transaction of flushed writes is open (with a redo log, until its commit timer or a read). */
  private batchOpen = false;
  private readonly redo: RedoLog | null = null;
  /** The redo log's last record number, and the commit timer of the open transaction. */
  private seq = 0;
  private commitTimer: NodeJS.Timeout | undefined;
  private readonly fatal: (e: unknown) => never;
  /** Runs the statements and procedures asked, and those a redo log replays. */
  private readonly entries: EntryRunner;
  private readonly commitMs: number;
  /** Queued entries the main thread acknowledged from its ahead log (a read must see them: it flushes first). */
  private queuedAhead = 0;
  /** What this engine has run of the main thread's ahead log. */
  private readonly ahead: AheadRun;

  constructor(
    path: string,
    private readonly procs: ReadonlyMap<string, Proc<unknown, unknown>>,
    opts: EngineOptions = {},
  ) {
    this.commitMs = opts.commitMs ?? COMMIT_MS;
    this.fatal =
      opts.fatal ??
      ((e) => {
        throw e;
      });
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
    // Prepared once: exec() would parse them again on every commit.
    this.begin = this.db.prepare('BEGIN IMMEDIATE');
    this.commit = this.db.prepare('COMMIT');
    this.rollback = this.db.prepare('ROLLBACK');
    this.savepoint = this.db.prepare('SAVEPOINT item');
    this.release = this.db.prepare('RELEASE item');
    this.rollbackTo = this.db.prepare('ROLLBACK TO item');
    this.entries = new EntryRunner(procs, this.holds, (sql) => this.prepared(this.db, sql));
    this.ahead = new AheadRun(this.db, opts.aheadCommitted);
    if (file && opts.redo) {
      this.redo = RedoLog.open(path);
      if (this.redo)
        this.seq = replayLogs(
          {
            db: this.db,
            entries: this.entries,
            holds: this.holds,
            ahead: this.ahead,
            inSavepoint: (w) => this.inSavepoint(w),
          },
          this.redo,
          path,
        );
    }
    if (file) {
      this.checkpoints = new Checkpoints(this.db, path, {
        canCommit: () => !this.inTx,
        commitNow: () => this.commitNow(),
        connectionIdle: () => !this.inTx && !this.batchOpen,
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

  handle(req: EngineRequest, reply: Reply): void {
    switch (req.op) {
      case 'read':
        if (!this.reader && this.inTx) this.deferred.push(() => this.handle(req, reply));
        else {
          if (this.queuedAhead > 0) this.flush(); // acknowledged from the ahead log: the read must see it
          this.commitNow(); // the reader sees what was acknowledged
          this.answer(reply, () => this.prepared(this.reader ?? this.db, req.sql)[req.kind](...req.params));
        }
        return;
      case 'write':
        return this.enqueue(reply, { sql: req.sql, params: req.params });
      case 'proc': {
        const proc = this.procs.get(req.name);
        if (!proc) return reply({ ok: false, error: { message: `unknown store procedure '${req.name}'` } });
        // A packed procedure (Proc.wire) is logged packed, and unpacked where it runs, as in a replay.
        if (req.ahead !== undefined && req.ahead <= this.ahead.last) return reply({ ok: true, value: null }); // ran
        const args: unknown = req.text !== undefined ? JSON.parse(req.text) : req.args;
        const entry: RedoEntry = proc.wire
          ? { proc: req.name, packed: args as unknown[], ...(req.ahead ? { ahead: req.ahead } : {}) }
          : { proc: req.name, args };
        if (!proc.readOnly) return this.enqueue(reply, entry);
        if (this.inTx) this.deferred.push(() => this.handle(req, reply));
        else this.runAtOnce(entry, reply);
        return;
      }
      case 'exec':
        if (this.inTx) this.deferred.push(() => this.handle(req, reply));
        else {
          this.commitNow();
          this.answer(reply, () => void this.db.exec(req.sql));
        }
        return;
      case 'begin':
        if (this.inTx) return reply({ ok: false, error: { message: 'a transaction is already open' } });
        this.flush(); // what was queued commits before, not inside, this transaction
        this.commitNow();
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
          this.db.exec(req.commit ? 'COMMIT' : 'ROLLBACK');
          if (req.commit) this.checkpoints?.committed();
        });
        for (const d of this.deferred.splice(0)) d();
        this.schedule();
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

  private enqueue(reply: Reply, redo: RedoEntry): void {
    if ('ahead' in redo) this.queuedAhead++;
    this.queue.push({ reply, redo });
    this.schedule();
  }

  /**
   * Flush at the end of this turn; or, when everything queued was acknowledged from the main thread's ahead log
   * (nobody waits for it), within AHEAD_FLUSH_MS: several requests' settlements then run as one (Proc.many) even
   * one request at a time, and a write somebody waits for brings the flush forward.
   */
  private schedule(): void {
    if (this.queue.length === 0) return;
    const soon = this.queuedAhead < this.queue.length;
    if (this.scheduled && (!soon || !this.aheadTimer)) return;
    clearTimeout(this.aheadTimer);
    this.aheadTimer = undefined;
    this.scheduled = true;
    const run = () => {
      this.scheduled = false;
      this.aheadTimer = undefined;
      this.flush();
    };
    if (soon) setImmediate(run);
    else this.aheadTimer = setTimeout(run, AHEAD_FLUSH_MS);
  }

  /** Everything queued waits for a timer (AHEAD_FLUSH_MS): the worker answers its message at once with nothing. */
  get waitingForTimer(): boolean {
    return this.aheadTimer !== undefined;
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

  /**
   * Run everything queued in the open transaction, all in one savepoint or, when one throws, each in its own (one
   * that throws is rolled back alone and refused), then make it durable and answer each: without a redo log by
   * committing now; with one by appending the items that succeeded to the log in one write, the commit following
   * within COMMIT_MS. Nobody is told success before their write is committed or logged.
   * A batch of ahead log entries only is not written to the redo log (see AheadRun).
   */
  private flush(): void {
    if (this.inTx || this.queue.length === 0) return;
    const aheadOnly = this.redo !== null && this.queuedAhead === this.queue.length;
    if (!aheadOnly && this.ahead.unlogged) this.commitNow();
    const batch = this.queue.splice(0);
    this.queuedAhead = 0;
    const out: EngineReply[] = [];
    const logged: RedoEntry[] = [];
    this.holds.dataVersion = null; // read again once in this flush (nobody else commits until it ends)
    try {
      if (!this.batchOpen) {
        this.begin.run();
        this.batchOpen = true;
      }
      const together = batch.length > 1 ? this.runTogether(batch, logged) : null;
      if (together) out.push(...together);
      else for (const item of batch) out.push(this.runItem(item, logged));
      if (!this.redo) this.commitOpen();
      else if (logged.length > 0) {
        if (!aheadOnly) {
          this.redo.append({ seq: this.seq + 1, entries: logged });
          this.seq++;
        }
        this.ahead.ran(logged, aheadOnly);
        this.holds.keep();
      }
    } catch (e) {
      if (this.redo) this.fatal(e); // acknowledged writes are in the open transaction: only a replay may go on
      this.batchOpen = false;
      if (this.db.inTransaction) this.rollback.run();
      this.holds.undo();
      const err: EngineReply = { ok: false, error: info(e) };
      for (const item of batch) item.reply(err);
      return;
    }
    if (this.batchOpen) this.commitTimer ??= setTimeout(() => this.commitNow(), this.commitMs);
    for (let i = 0; i < batch.length; i++) batch[i].reply(out[i]);
  }

  /**
   * Every item of a batch in one savepoint, two statements a batch instead of two an item. If one throws, null says to
   * run each item again in its own savepoint (runItem), so that an item that fails still fails alone.
   */
  private runTogether(batch: Queued[], logged: RedoEntry[]): EngineReply[] | null {
    let out: EngineReply[];
    try {
      out = this.inSavepoint(() =>
        this.entries.runAll(batch.map((item) => item.redo)).map((value) => ({ ok: true, value })),
      );
    } catch {
      return null;
    }
    for (const item of batch) logged.push(item.redo);
    return out;
  }

  private runItem(item: Queued, logged: RedoEntry[]): EngineReply {
    try {
      const value = this.inSavepoint(() => this.entries.run(item.redo));
      logged.push(item.redo);
      return { ok: true, value };
    } catch (e) {
      return failed(e);
    }
  }

  /** `work` in a savepoint: if it throws, what it did is rolled back, holds included, and the error goes on. */
  private inSavepoint<T>(work: () => T): T {
    const mark = this.holds.mark();
    this.savepoint.run();
    try {
      const value = work();
      this.release.run();
      return value;
    } catch (e) {
      this.rollbackTo.run();
      this.release.run();
      this.holds.undoTo(mark);
      throw e;
    }
  }

  /** Commit the open transaction of flushed writes (with a redo log, its last record with it, then empty the log). */
  private commitOpen(): void {
    clearTimeout(this.commitTimer);
    this.commitTimer = undefined;
    if (!this.batchOpen) return;
    if (this.redo) {
      this.prepared(this.db, REDO_MARK).run(this.seq);
      this.ahead.mark();
    }
    this.commit.run();
    this.batchOpen = false;
    this.holds.keep();
    this.redo?.clear();
    this.checkpoints?.committed();
    if (this.redo) this.ahead.commitDone();
  }

  /** commitOpen outside a flush: a failure leaves acknowledged writes uncommitted, so the engine ends. */
  private commitNow(): void {
    try {
      this.commitOpen();
    } catch (e) {
      this.fatal(e);
    }
  }

  private close(): void {
    this.checkpoints?.close();
    this.flush();
    this.commitNow();
    this.redo?.close();
    if (!this.db.open) return;
    if (this.reader) {
      this.reader.close();
      this.db.pragma('wal_checkpoint(TRUNCATE)');
    }
    this.db.close();
  }
}
