import type { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';
import type { CheckpointReply } from './sqlite-checkpointer';
import { fileSize } from '../stats';
import { startStoreWorker } from './worker-start';

/** How often the engine checkpoints the WAL, and truncates it when nothing was written since the last tick. */
const CHECKPOINT_MS = 1000;
/**
 * The WAL file is cut back to this size when a checkpoint resets it (and to zero once idle). Under load a second's
 * WAL is tens of MB, and at c=1 (a commit per request, ~60 KB of pages each) about 100 MB: cutting it back to a few
 * MB every second, then growing it again, cost the writer ~20-30 ms stalls once a second (c=1 p999 22-30 ms against
 * 11-17 ms at 64 MB) and ~25% of its CPU; at 64 MB the c=1 WAL still grew by 20-60 MB a second past the cut (file
 * extension: block allocation and zeroed pages), ~10% of the writer's CPU more than at this size.
 */
const WAL_LIMIT_BYTES = 256 * 1024 * 1024;
/**
 * The WAL file a second must have grown before checkpoints move to the checkpointer thread: a checkpoint ends with
 * fsyncs of the WAL and the database file, milliseconds that every write waits for when it runs on the writer. With
 * the redo log a loaded second writes ~2-3 MB of WAL (no longer ~60 KB a request).
 */
const CHECKPOINTER_MIN_WAL = 1024 * 1024;

/** What the checkpoints need of the engine whose writer connection they share. */
export interface CheckpointHost {
  /** No transaction driven from the main thread is open (the engine may commit what it holds open). */
  canCommit(): boolean;
  /** Commit the open transaction of acknowledged writes, if any. */
  commitNow(): void;
  /** No transaction at all is open on the writer connection. */
  connectionIdle(): boolean;
}

/**
 * The WAL checkpoints of a file store's writer connection, on a timer. After a second with writes: the checkpointer
 * thread copies the WAL into the database file (the bulk of the pages and the fsyncs of a second's WAL, off the
 * writer's thread), then the writer checkpoints what was committed meanwhile (a few pages) between two transactions,
 * so that the next transaction starts the WAL again from its beginning and it stays bounded under any load. After a
 * quiet second: TRUNCATE (the WAL file back to zero bytes), and the checkpointer thread ends.
 */
export class Checkpoints {
  private dirty = false;
  private walUsed = false;
  private readonly timer: NodeJS.Timeout;
  /**
   * The checkpointer thread, started with the first second of writes and stopped once the store is idle and its WAL
   * truncated (an idle thread is an isolate, ~6 MB); whether it is copying the WAL now; whether the writer owes the
   * catch-up; and the database path, null once the thread could not start (checkpoints then run on the writer).
   */
  private thread: Worker | null = null;
  private copying = false;
  private catchUp = false;
  private path: string | null;

  constructor(
    private readonly db: Database.Database,
    path: string,
    private readonly host: CheckpointHost,
  ) {
    this.path = path;
    // Checkpoints run on a timer here, off the event loop, rather than inside whichever commit crosses 1000 pages.
    db.pragma('wal_autocheckpoint = 0');
    db.pragma(`journal_size_limit = ${WAL_LIMIT_BYTES}`);
    this.timer = setInterval(() => this.tick(), CHECKPOINT_MS);
    this.timer.unref();
  }

  /** Whether the checkpointer thread runs now. */
  get threadRunning(): boolean {
    return this.thread !== null;
  }

  /** A transaction committed on the writer: the next tick checkpoints, and a catch-up owed runs now. */
  committed(): void {
    this.dirty = true;
    this.catchUpNow();
  }

  private tick(): void {
    if (!this.host.canCommit() || !this.db.open || this.copying) return;
    this.host.commitNow();
    try {
      if (this.dirty) {
        this.dirty = false;
        this.walUsed = true;
        // A light second (the admin API, a few requests) is checkpointed here; the thread is for a loaded store.
        if (!this.thread && this.path && fileSize(`${this.path}-wal`) >= CHECKPOINTER_MIN_WAL)
          this.thread = this.start(this.path);
        if (this.thread) {
          this.copying = true;
          this.thread.postMessage('checkpoint');
        } else this.db.pragma('wal_checkpoint(PASSIVE)');
      } else if (this.walUsed) {
        this.db.pragma('wal_checkpoint(TRUNCATE)');
        this.walUsed = false;
        this.stopThread();
      }
    } catch {
      // busy: the next tick tries again
    }
  }

  private start(path: string): Worker | null {
    let w: Worker;
    try {
      w = startStoreWorker('sqlite-checkpointer', { path });
    } catch {
      this.path = null;
      return null; // checkpoints then run on the writer
    }
    w.on('message', (r: CheckpointReply) => {
      this.copying = false;
      // The catch-up: what was committed since the thread began, copied on the writer between two transactions.
      // Only a transaction that begins with the WAL wholly copied may start it again from its beginning; with the
      // redo log one begins right after each commit under load, so without this the WAL never restarts (it grew to
      // 1.9 GB in 2.5 minutes at c=32).
      if (r.ok) this.catchUp = true;
      this.catchUpNow();
    });
    const gone = () => {
      if (this.thread !== w) return;
      this.thread = null;
      this.path = null; // it failed: from now on checkpoints run on the writer
      this.copying = false;
    };
    w.on('error', gone);
    w.on('exit', gone);
    w.unref();
    return w;
  }

  /** The few frames committed while the thread copied, on the writer connection (outside any transaction). */
  private catchUpNow(): void {
    if (!this.catchUp || !this.host.connectionIdle() || !this.db.open) return;
    this.catchUp = false;
    try {
      this.db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // busy: the next round catches up
    }
  }

  /** The store is idle: the thread ends (the next second with writes starts another). */
  private stopThread(): void {
    const w = this.thread;
    if (!w || this.copying) return;
    this.thread = null;
    w.postMessage('close');
  }

  /** The engine closes: no more ticks, and the thread ends. */
  close(): void {
    clearInterval(this.timer);
    const w = this.thread;
    this.thread = null;
    w?.postMessage('close');
  }
}
