import {
  addObserver,
  callNested,
  observed,
  pick,
  type Db,
  type DbObserver,
  type Param,
  type Proc,
  type RunResult,
  type Sql,
} from '../db';
import type { EngineOptions, EngineRequest, EngineStatus } from './engine-protocol';
import { DEFAULT_WORKER_IDLE_MS, InThreadLink, StoreWorkerGone, WorkerLink, type EngineLink } from './sqlite-links';
import { AheadLog } from './ahead-log';
import { lockWriter } from './sqlite-lock';
import { procedureRegistry } from '../procedures';

/** Times a call acknowledged from the ahead log is sent again to a new worker after the one it was sent to died. */
const AHEAD_RESENDS = 3;

/**
 * `redo` and `commitMs` as the engine takes them (EngineOptions), the worker's idle stop, and `lock`: this process
 * is the file's one gateway process (./sqlite-lock.ts; another process holding it makes the constructor throw).
 */
export type SqliteOptions = Pick<EngineOptions, 'redo' | 'commitMs'> & {
  idleWorkerMs?: number;
  lock?: boolean;
  /** Module paths of plugins' procedures (src/store/procedures.ts), loaded where the engine runs. */
  procedures?: readonly string[];
};

function toSqlite(params: readonly Param[]): Param[] {
  return params.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p));
}

/** A procedure as the engine is asked to run it, its arguments packed where it has a wire form (Proc.wire). */
function procRequest<A>(proc: Proc<A, unknown>, args: A): EngineRequest {
  return { op: 'proc', name: proc.name, args: proc.wire ? proc.wire.pack(args) : args };
}

/**
 * SQLite behind the async Db seam. The connection lives in an engine (./sqlite-engine.ts)
 * that runs in a worker thread for a file: no disk work, commit or checkpoint ever runs on the event
 * loop. Transactions written as procedures cross the thread once; tx(fn) is driven from here
 * statement by statement, one at a time.
 */
export class SqliteDb implements Db {
  readonly dialect = 'sqlite' as const;
  observer?: DbObserver;
  private readonly link: EngineLink;
  private txTail: Promise<unknown> = Promise.resolve();
  private ahead: AheadLog | null = null;
  private writes = 0;
  /** Drops this store's share of the one-gateway-process lock (./sqlite-lock.ts), when it took it. */
  private readonly unlock: (() => void) | null;

  /**
   * How many writes other than credit settlements have finished (committed or not): what the main thread knows of
   * credit (the credit plugin's local holds) from before the latest of them is read again.
   */
  get foreignWrites(): number {
    return this.writes;
  }

  private counted<T>(p: Promise<T>): Promise<T> {
    const done = () => void this.writes++;
    p.then(done, done);
    return p;
  }

  /**
   * `redo`: the worker keeps a redo log and commits writes in groups a few milliseconds long (./redo-log.ts);
   * the gateway's own process only (one process may keep it: another runs without). `idleWorkerMs`: how long a file
   * store's worker thread may idle before it stops (0: it never does).
   */
  constructor(
    private readonly path: string,
    opts: SqliteOptions = {},
  ) {
    const { idleWorkerMs = DEFAULT_WORKER_IDLE_MS, lock = false, procedures = [], ...engine } = opts;
    // Loaded here as well for a file: a module that cannot load fails the open, not every start of the worker.
    const procs = procedureRegistry(procedures);
    this.unlock = lock && path !== ':memory:' ? lockWriter(path) : null;
    this.link =
      path === ':memory:' ? new InThreadLink(procs) : new WorkerLink(path, { ...engine, procedures }, idleWorkerMs);
  }

  all<T>(sql: Sql, params: readonly Param[] = []): Promise<T[]> {
    return observed(
      this,
      'all',
      () =>
        this.link.request({ op: 'read', kind: 'all', sql: pick(sql, 'sqlite'), params: toSqlite(params) }) as Promise<
          T[]
        >,
    );
  }
  get<T>(sql: Sql, params: readonly Param[] = []): Promise<T | undefined> {
    return observed(
      this,
      'get',
      () =>
        this.link.request({ op: 'read', kind: 'get', sql: pick(sql, 'sqlite'), params: toSqlite(params) }) as Promise<
          T | undefined
        >,
    );
  }
  run(sql: Sql, params: readonly Param[] = []): Promise<RunResult> {
    const req: EngineRequest = { op: 'write', sql: pick(sql, 'sqlite'), params: toSqlite(params) };
    return observed(this, 'run', () => this.counted(this.link.request(req) as Promise<RunResult>));
  }
  write(sql: Sql, params: readonly Param[] = []): Promise<RunResult> {
    return this.run(sql, params);
  }
  async exec(sql: Sql): Promise<void> {
    await this.counted(this.link.request({ op: 'exec', sql: pick(sql, 'sqlite') }));
  }
  /**
   * Run a read-only procedure whose answer nobody needs (entering a hold into the engine's book) with the next
   * request that crosses to the engine, before it: it never sends a message of its own.
   */
  tell<A>(proc: Proc<A, unknown>, args: A): void {
    if (!proc.readOnly) throw new Error(`store procedure '${proc.name}' writes: it must be asked, not told`);
    this.link.tell(procRequest(proc, args));
  }
  call<A, R>(proc: Proc<A, R>, args: A): Promise<R> {
    return observed(this, 'tx', () => {
      const out = this.link.request(procRequest(proc, args)) as Promise<R>;
      return proc.readOnly || proc.reportsCredit ? out : this.counted(out);
    });
  }
  /**
   * Start the ahead log (./ahead-log.ts) if this process's engine keeps the redo log (the gateway's own process):
   * then callLogged answers from it. The engine ran what the log's files held when it started.
   */
  async startAhead(): Promise<boolean> {
    if (this.ahead || this.path === ':memory:') return this.ahead !== null;
    const s = await this.status();
    if (s.redo) {
      const log = new AheadLog(this.path, s.ahead);
      this.link.onAheadCommitted = (seq) => log.committed(seq);
      this.ahead = log;
    }
    return this.ahead !== null;
  }

  /**
   * Run a procedure, acknowledged twice: `logged` once the call is in the ahead log (a SIGKILL from then on cannot
   * lose it: the next engine runs it), `answered` with its result once the engine ran it (null: an engine ran it from
   * the log before it was sent again). Without an ahead log (or after a write to it failed) null: use call().
   */
  callLogged<A, R>(proc: Proc<A, R>, args: A): { logged: Promise<void>; answered: Promise<R | null> } | null {
    const log = this.ahead;
    if (!log?.usable || !proc.wire || proc.readOnly) return null;
    const packed = proc.wire.pack(args);
    const { seq, written, text } = log.add(proc.name, packed, proc.wire.json?.(packed));
    let req: EngineRequest =
      text === null
        ? { op: 'proc', name: proc.name, args: packed, ahead: seq }
        : { op: 'proc', name: proc.name, args: null, ahead: seq, text };
    // Once it is in the log's file, a worker that starts after this one died runs it from there before anything else:
    // what is sent again need not carry the arguments, which then live no longer than the message, not until the
    // answer (a flush of the worker later: held that long, they outlived the young generation's collections).
    void written.then(
      () => (req = { op: 'proc', name: proc.name, args: null, ahead: seq }),
      () => undefined,
    );
    const send = (tries: number): Promise<R | null> =>
      (this.link.request(req) as Promise<R | null>).catch((e: unknown) => {
        if (e instanceof StoreWorkerGone && tries < AHEAD_RESENDS) return send(tries + 1);
        throw e;
      });
    const answered = observed(this, 'tx', () => send(0));
    const done = () => log.answered(seq);
    answered.then(done, done);
    return { logged: written.catch(() => answered.then(() => undefined)), answered };
  }

  tx<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    // One driven transaction at a time; each waits for the one before it.
    const out = this.txTail.then(() => observed(this, 'tx', () => this.counted(this.driven(fn))));
    this.txTail = out.catch(() => undefined);
    return out;
  }

  private async driven<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    await this.link.request({ op: 'begin' });
    let value: T;
    try {
      value = await fn(new SqliteTx(this.link));
    } catch (e) {
      await this.link.request({ op: 'end', commit: false });
      throw e;
    }
    await this.link.request({ op: 'end', commit: true });
    return value;
  }

  /** Messages sent to the engine's thread so far: each wakes that thread and this one again for the answer. */
  get messages(): number {
    return this.link.messages;
  }

  /** Whether a file store's worker thread runs now: it stops after idling, and the next request starts another. */
  get workerRunning(): boolean {
    return this.link.running;
  }

  observe(fn: DbObserver): () => void {
    return addObserver(this, fn);
  }

  /** The engine's own state (whether its checkpointer thread runs). */
  status(): Promise<EngineStatus> {
    return this.link.request({ op: 'status' }) as Promise<EngineStatus>;
  }

  async close(): Promise<void> {
    await this.txTail;
    await this.link.close();
    await this.ahead?.close();
    this.ahead = null;
    this.unlock?.();
  }
}

class SqliteTx implements Db {
  readonly dialect = 'sqlite' as const;
  constructor(private readonly link: EngineLink) {}
  private stmt(kind: 'all' | 'get' | 'run' | 'exec', sql: Sql, params: readonly Param[]): Promise<unknown> {
    return this.link.request({ op: 'stmt', kind, sql: pick(sql, 'sqlite'), params: toSqlite(params) });
  }
  async all<T>(sql: Sql, params: readonly Param[] = []): Promise<T[]> {
    return (await this.stmt('all', sql, params)) as T[];
  }
  async get<T>(sql: Sql, params: readonly Param[] = []): Promise<T | undefined> {
    return (await this.stmt('get', sql, params)) as T | undefined;
  }
  async run(sql: Sql, params: readonly Param[] = []): Promise<RunResult> {
    return (await this.stmt('run', sql, params)) as RunResult;
  }
  write(sql: Sql, params: readonly Param[] = []): Promise<RunResult> {
    return this.run(sql, params);
  }
  async exec(sql: Sql): Promise<void> {
    await this.stmt('exec', sql, []);
  }
  tx<T>(fn: (db: Db) => Promise<T>): Promise<T> {
    return fn(this); // already inside one
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
