import type { Worker } from 'node:worker_threads';
import { AHEAD_COMMITTED_ID } from './engine-protocol';
import type { EngineOptions, EngineReply, EngineRequest, EngineStatus, ErrorInfo } from './engine-protocol';
import type { Proc } from '../db';
import type { SqliteEngine } from './sqlite-engine';
import { startStoreWorker } from './worker-start';

/** Carries engine requests to wherever the SQLite engine runs. */
export interface EngineLink {
  request(req: EngineRequest): Promise<unknown>;
  /** A request nobody waits for: it goes with the next request's message, never in one of its own. */
  tell(req: EngineRequest): void;
  /** Messages sent to the engine's thread so far (0 in-thread). */
  readonly messages: number;
  /** Whether the engine's thread runs now (always in-thread). */
  readonly running: boolean;
  /** Told the last entry of the main thread's ahead log the engine committed, each time it moves. */
  onAheadCommitted: ((seq: number) => void) | null;
  close(): Promise<void>;
}

/** What was in hand when the store's worker thread died fails with this: it never ran, or ran uncommitted. */
export class StoreWorkerGone extends Error {}

function toError(e: ErrorInfo): Error {
  return Object.assign(new Error(e.message), e.code ? { code: e.code } : {});
}

function settle(r: EngineReply, resolve: (v: unknown) => void, reject: (e: unknown) => void): void {
  if (r.ok) resolve(r.value);
  else reject(toError(r.error));
}

/**
 * `memory`: the engine in this thread (nothing touches a disk). Loaded here only: with a file
 * the engine and better-sqlite3 live in the worker, and the main thread never loads the engine (better-sqlite3 only
 * for the gateway process's lock on the file, ./sqlite-lock.ts).
 */
export class InThreadLink implements EngineLink {
  private readonly engine: SqliteEngine;
  constructor(procedures: ReadonlyMap<string, Proc<unknown, unknown>>) {
    this.engine = new (require('./sqlite-engine') as typeof import('./sqlite-engine')).SqliteEngine(
      ':memory:',
      procedures,
    );
  }
  request(req: EngineRequest): Promise<unknown> {
    return new Promise((resolve, reject) => this.engine.handle(req, (r) => settle(r, resolve, reject)));
  }
  tell(req: EngineRequest): void {
    this.engine.handle(req, () => undefined);
  }
  readonly messages = 0;
  readonly running = true;
  onAheadCommitted: ((seq: number) => void) | null = null;
  async close(): Promise<void> {
    await this.request({ op: 'close' });
  }
}

/** How long the store's worker thread may sit idle before it stops (an idle isolate is ~6 MB): 10 s. */
export const DEFAULT_WORKER_IDLE_MS = 10_000;

/**
 * A file database: the engine in a worker thread (started by ./worker-start.ts). A worker that dies fails what it
 * had in hand and is started again by the next request. The worker is kept referenced only while
 * a request is in flight, so an idle store never holds the process open.
 *
 * A worker idle for `idleMs` (no request in flight or waiting to cross, no driven transaction open, no credit hold in
 * its book) is stopped through the orderly `close` (everything committed, the WAL checkpointed and truncated), and
 * the next request starts another: its engine starts a new book, as after a worker that died (LocalCredit reads
 * the balances again).
 */
export class WorkerLink implements EngineLink {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  private nextId = 1;
  onAheadCommitted: ((seq: number) => void) | null = null;
  /** A driven transaction is open: between its `begin` and its `end` the worker holds it, asked or not. */
  private txOpen = false;
  private idleTimer: NodeJS.Timeout | null = null;
  /** The idle worker is checking its holds before it stops (a request meanwhile keeps it). */
  private checking = false;
  /** An idle worker closing: what comes meanwhile waits in the outbox for the next worker. */
  private stopping: Promise<void> | null = null;

  constructor(
    private readonly path: string,
    /** `procedures`: the module paths the worker loads its procedures from (src/store/procedures.ts). */
    private readonly opts: Pick<EngineOptions, 'redo' | 'commitMs'> & { procedures: readonly string[] },
    private readonly idleMs: number,
  ) {}

  private start(): Worker {
    const w = startStoreWorker('sqlite-worker', { path: this.path, ...this.opts });
    // Answers come in batches (one message per worker turn: a group commit answers many at once).
    w.on('message', (batch: Array<{ id: number } & EngineReply>) => {
      this.unanswered = false;
      this.schedule();
      for (const m of batch) {
        if (m.id === AHEAD_COMMITTED_ID && m.ok) {
          this.onAheadCommitted?.(m.value as number);
          continue;
        }
        const p = this.pending.get(m.id);
        if (!p) continue;
        this.pending.delete(m.id);
        settle(m, p.resolve, p.reject);
      }
      if (this.pending.size === 0) w.unref();
      this.whenIdle();
    });
    const fail = (e: unknown) => {
      if (this.worker !== w) return;
      this.worker = null;
      this.unanswered = false;
      this.outbox = []; // what was asked is in pending, failed below; what was told is lost with the worker's book
      this.asked = false;
      this.txOpen = false;
      const err = new StoreWorkerGone(e instanceof Error ? e.message : `store worker exited (${String(e)})`);
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    w.on('error', fail);
    w.on('exit', fail);
    w.unref();
    return w;
  }

  /** The worker, started if there is none (and none is stopping: then null, and what is sent waits for the next). */
  private current(): Worker | null {
    if (!this.worker && !this.stopping) this.worker = this.start();
    return this.worker;
  }

  request(req: EngineRequest): Promise<unknown> {
    const w = this.current();
    const id = this.nextId++;
    if (req.op === 'end') this.txOpen = false;
    const answered = new Promise((resolve, reject) => {
      if (this.pending.size === 0) w?.ref();
      this.pending.set(id, { resolve, reject });
      this.outbox.push({ id, req });
      this.asked = true;
      this.schedule();
    });
    if (req.op !== 'begin') return answered;
    this.txOpen = true;
    return answered.catch((e: unknown) => {
      this.txOpen = false; // refused: no transaction was opened
      this.whenIdle();
      throw e;
    });
  }

  /** Id 0: the worker answers nothing. If the worker dies before the next message, what was told is lost with it. */
  tell(req: EngineRequest): void {
    this.current();
    this.outbox.push({ id: 0, req });
  }

  private idle(): boolean {
    return this.pending.size === 0 && this.outbox.length === 0 && !this.txOpen && !this.unanswered;
  }

  /** Every answer is in and nothing waits: the worker stops after idleMs more of this. */
  private whenIdle(): void {
    if (this.idleMs <= 0 || this.closed || this.idleTimer || this.checking || !this.idle()) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = null;
      // Busy again: the answer to what came arms the timer anew.
      if (this.worker && this.idle()) void this.stopIfIdle(this.worker);
    }, this.idleMs);
    this.idleTimer.unref(); // an idle store never holds the process open
  }

  /** Holds live in the worker's book: it stops only with none (a request still upstream settles one later). */
  private async stopIfIdle(w: Worker): Promise<void> {
    this.checking = true;
    let holds: number;
    try {
      holds = ((await this.request({ op: 'status' })) as EngineStatus).holds;
    } catch {
      return; // the worker died: the next request starts another
    } finally {
      this.checking = false;
    }
    if (this.worker !== w || !this.idle()) return; // a request came meanwhile: it rearms the timer when answered
    if (holds > 0) return this.whenIdle();
    this.worker = null;
    this.stopping = this.retire(w);
  }

  /** The orderly close, told (nobody waits for an answer): the worker commits, checkpoints, closes and exits. */
  private async retire(w: Worker): Promise<void> {
    const exited = new Promise<void>((r) => w.once('exit', () => r()));
    w.ref(); // the close runs to its end even if nothing else keeps the process alive
    this.messages++;
    w.postMessage([{ id: 0, req: { op: 'close' } satisfies EngineRequest }]);
    await exited;
    this.stopping = null;
    if (this.asked) {
      // Asked while it closed: the next worker takes the outbox.
      const next = this.current();
      if (this.pending.size > 0) next?.ref();
      this.schedule();
    }
  }

  /**
   * Requests cross to the worker in batches, one message at a time: a message costs this thread ~5-10 us whatever it
   * holds, and wakes the other. What is asked while a message is unanswered waits for the worker's next reply
   * (the worker would reach it only then anyway: it is busy with the one before), so under load every
   * connection's requests of several passes share a message and the replies come as few; at rest a request
   * leaves when the pass's I/O callbacks have run (setImmediate). Every message is answered: by its replies, or at
   * once by an empty batch while a transaction driven from here is open (what it holds waits for that transaction's
   * end, which must not wait behind it). What is told (`tell`) waits in the outbox for the next request: at rest a
   * request then crosses once, not twice, and nothing told is overtaken by what is asked after it.
   */
  private outbox: Array<{ id: number; req: EngineRequest }> = [];
  /** The outbox holds a request somebody waits for. */
  private asked = false;
  private unanswered = false;
  private scheduled = false;
  messages = 0;

  private schedule(): void {
    if (this.scheduled || this.unanswered || !this.asked) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const w = this.worker;
      if (!w || this.unanswered || !this.asked) return;
      const batch = this.outbox;
      this.outbox = [];
      this.asked = false;
      this.unanswered = true;
      this.messages++;
      w.postMessage(batch);
    });
  }

  /** Whether a worker thread runs now (it stops when idle). */
  get running(): boolean {
    return this.worker !== null || this.stopping !== null;
  }

  private closed = false;

  async close(): Promise<void> {
    this.closed = true;
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    await this.stopping;
    const w = this.worker;
    if (!w) return;
    await this.request({ op: 'close' });
    this.worker = null;
    await w.terminate();
  }
}
