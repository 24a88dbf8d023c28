import type Database from 'better-sqlite3';
import type { AheadRun } from './ahead-run';
import type { EntryRunner } from './entry-runner';
import type { HoldBook } from './holds';
import { REDO_MARK, type RedoEntry, type RedoLog } from './redo-log';
import { failed, info } from './engine-protocol';
import type { EngineReply } from './engine-protocol';

export type Reply = (r: EngineReply) => void;
type Statement = Database.Statement<unknown[]>;
/** How long writes acknowledged from the ahead log may wait to run together (ms). */
const AHEAD_FLUSH_MS = 5;
/** A write waiting for the next flush: who waits for its answer, and what it is (as the redo log keeps it). */
interface Queued {
  reply: Reply;
  redo: RedoEntry;
}

/** What the group commit shares with the engine around it (./sqlite-engine.ts). */
export interface GroupCommitDeps {
  entries: EntryRunner;
  holds: HoldBook;
  /** The redo log, when this engine keeps one: then an answer waits for its record, not for the commit. */
  redo: RedoLog | null;
  ahead: AheadRun;
  /** How long acknowledged writes wait for their commit (with a redo log). */
  commitMs: number;
  /** A statement on the write connection, from the engine's cache. */
  prepare: (sql: string) => Statement;
  /** A transaction driven from the main thread is open: nothing is flushed into it. */
  inTx: () => boolean;
  /** Told after every commit (the WAL's checkpoints). */
  committed: () => void;
  /** Fold what row triggers staged (Proc.foldsStaged) within the open transaction. */
  fold: () => void;
  /** A commit or the redo log failed with writes acknowledged. */
  fatal: (e: unknown) => never;
}

/**
 * The SQLite engine's group commit: the writes and procedures that arrive in one turn (or, acknowledged from the main
 * thread's ahead log, within AHEAD_FLUSH_MS) run in one transaction, all in one savepoint or each in its own when one
 * fails, and each is answered once committed or, with a redo log, once logged (the commit follows within commitMs).
 */
export class GroupCommit {
  private queue: Queued[] = [];
  private scheduled = false;
  private aheadTimer: NodeJS.Timeout | undefined;
  /** Queued entries the main thread acknowledged from its ahead log (a read must see them: it flushes first). */
  queuedAhead = 0;
  /** The transaction of flushed writes is open (with a redo log, until its commit timer or a read). */
  batchOpen = false;
  /** The redo log's last record number (a replay sets where it starts). */
  seq = 0;
  private commitTimer: NodeJS.Timeout | undefined;
  private readonly begin: Statement;
  private readonly commit: Statement;
  private readonly rollback: Statement;
  private readonly savepoint: Statement;
  private readonly release: Statement;
  private readonly rollbackTo: Statement;

  constructor(
    private readonly db: Database.Database,
    private readonly deps: GroupCommitDeps,
  ) {
    // Prepared once: exec() would parse them again on every commit.
    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.commit = db.prepare('COMMIT');
    this.rollback = db.prepare('ROLLBACK');
    this.savepoint = db.prepare('SAVEPOINT item');
    this.release = db.prepare('RELEASE item');
    this.rollbackTo = db.prepare('ROLLBACK TO item');
  }

  enqueue(reply: Reply, redo: RedoEntry): void {
    if ('ahead' in redo) this.queuedAhead++;
    this.queue.push({ reply, redo });
    this.schedule();
  }

  /**
   * Flush at the end of this turn; or, when everything queued was acknowledged from the main thread's ahead log
   * (nobody waits for it), within AHEAD_FLUSH_MS: several requests' settlements then run as one (Proc.many) even
   * one request at a time, and a write somebody waits for brings the flush forward.
   */
  schedule(): void {
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

  /**
   * Run everything queued in the open transaction, all in one savepoint or, when one throws, each in its own (one
   * that throws is rolled back alone and refused), then make it durable and answer each: without a redo log by
   * committing now; with one by appending the items that succeeded to the log in one write, the commit following
   * within COMMIT_MS. Nobody is told success before their write is committed or logged.
   * A batch of ahead log entries only is not written to the redo log (see AheadRun).
   */
  flush(): void {
    if (this.deps.inTx() || this.queue.length === 0) return;
    const aheadOnly = this.deps.redo !== null && this.queuedAhead === this.queue.length;
    if (!aheadOnly && this.deps.ahead.unlogged) this.commitNow();
    const batch = this.queue.splice(0);
    this.queuedAhead = 0;
    const out: EngineReply[] = [];
    const logged: RedoEntry[] = [];
    this.deps.holds.dataVersion = null; // read again once in this flush (nobody else commits until it ends)
    try {
      if (!this.batchOpen) {
        this.begin.run();
        this.batchOpen = true;
      }
      const together = batch.length > 1 ? this.runTogether(batch, logged) : null;
      if (together) out.push(...together);
      else for (const item of batch) out.push(this.runItem(item, logged));
      this.deps.fold();
      if (!this.deps.redo) this.commitOpen();
      else if (logged.length > 0) {
        if (!aheadOnly) {
          this.deps.redo.append({ seq: this.seq + 1, entries: logged });
          this.seq++;
        }
        this.deps.ahead.ran(logged, aheadOnly);
        this.deps.holds.keep();
      }
    } catch (e) {
      // Acknowledged writes are in the open transaction: only a replay may go on.
      if (this.deps.redo) this.deps.fatal(e);
      this.batchOpen = false;
      if (this.db.inTransaction) this.rollback.run();
      this.deps.holds.undo();
      const err: EngineReply = { ok: false, error: info(e) };
      for (const item of batch) item.reply(err);
      return;
    }
    if (this.batchOpen) this.commitTimer ??= setTimeout(() => this.commitNow(), this.deps.commitMs);
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
        this.deps.entries.runAll(batch.map((item) => item.redo)).map((value) => ({ ok: true, value })),
      );
    } catch {
      return null;
    }
    for (const item of batch) logged.push(item.redo);
    return out;
  }

  private runItem(item: Queued, logged: RedoEntry[]): EngineReply {
    try {
      const value = this.inSavepoint(() => this.deps.entries.run(item.redo));
      logged.push(item.redo);
      return { ok: true, value };
    } catch (e) {
      return failed(e);
    }
  }

  /** `work` in a savepoint: if it throws, what it did is rolled back, holds included, and the error goes on. */
  inSavepoint<T>(work: () => T): T {
    const mark = this.deps.holds.mark();
    this.savepoint.run();
    try {
      const value = work();
      this.release.run();
      return value;
    } catch (e) {
      this.rollbackTo.run();
      this.release.run();
      this.deps.holds.undoTo(mark);
      throw e;
    }
  }

  /** Commit the open transaction of flushed writes (with a redo log, its last record with it, then empty the log). */
  private commitOpen(): void {
    clearTimeout(this.commitTimer);
    this.commitTimer = undefined;
    if (!this.batchOpen) return;
    if (this.deps.redo) {
      this.deps.prepare(REDO_MARK).run(this.seq);
      this.deps.ahead.mark();
    }
    this.commit.run();
    this.batchOpen = false;
    this.deps.holds.keep();
    this.deps.redo?.clear();
    this.deps.committed();
    if (this.deps.redo) this.deps.ahead.commitDone();
  }

  /** commitOpen outside a flush: a failure leaves acknowledged writes uncommitted, so the engine ends. */
  commitNow(): void {
    try {
      this.commitOpen();
    } catch (e) {
      this.deps.fatal(e);
    }
  }
}
