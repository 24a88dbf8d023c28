/**
 * The SQL seam the Store is written against, so that every repository is written once
 * for SQLite and PostgreSQL alike. SQL uses `?` placeholders; the PostgreSQL driver
 * numbers them. Statements the two dialects spell differently take a `{sqlite, postgres}` pair.
 */
import type { HoldBook } from './engine/holds';
import { callAsync } from '../call-async';
import { nowMs } from '../clock';

export type Dialect = 'sqlite' | 'postgres';

export type Sql = string | { sqlite: string; postgres: string };

export type Param = string | number | bigint | boolean | null;

export interface RunResult {
  changes: number;
}

/** Told of every statement's duration (seconds) and whether it failed, when set (metrics). */
export type DbObserver = (op: 'all' | 'get' | 'run' | 'exec' | 'tx', seconds: number, failed: boolean) => void;

export interface Db {
  readonly dialect: Dialect;
  /** The observer observe() set (read by every store call: one slot, not a list). */
  observer?: DbObserver;
  /**
   * Be told of every statement's duration and failure (metrics). Observers added by several callers are each told;
   * the function returned removes this one. Not inside a transaction (it throws there).
   */
  observe(fn: DbObserver): () => void;
  all<T = Record<string, unknown>>(sql: Sql, params?: readonly Param[]): Promise<T[]>;
  get<T = Record<string, unknown>>(sql: Sql, params?: readonly Param[]): Promise<T | undefined>;
  run(sql: Sql, params?: readonly Param[]): Promise<RunResult>;
  /** A single write that may be committed together with others (SQLite group commit); resolves once durable. */
  write(sql: Sql, params?: readonly Param[]): Promise<RunResult>;
  /** Several statements, no parameters (migrations). */
  exec(sql: Sql): Promise<void>;
  /** Run fn inside one transaction; it commits when fn resolves and rolls back when it throws. */
  tx<T>(fn: (db: Db) => Promise<T>): Promise<T>;
  /**
   * Run a registered procedure as one transaction. On SQLite it runs whole inside the store's
   * worker thread (one message, committed with others in the same group); elsewhere it is
   * driven statement by statement inside tx().
   */
  call<A, R>(proc: Proc<A, R>, args: A): Promise<R>;
  /**
   * SQLite in the gateway's own process: run a procedure (one with a wire form that writes) acknowledged twice,
   * `logged` once the main thread's ahead log has it (a crash from then on cannot lose it), `answered` with its result
   * once the engine ran it. Null (or absent: other stores) when there is no ahead log: use call().
   */
  callLogged?<A, R>(proc: Proc<A, R>, args: A): { logged: Promise<void>; answered: Promise<R | null> } | null;
  /**
   * PostgreSQL: one transaction sent as a few messages of several statements each, a round trip per message rather
   * than per statement, so that rows locked by one message are held for its round trip only (decision 0042). `fn`
   * sends each message with `send` and reads the rows of each of its statements; the message sent with `commit` ends
   * the transaction (one is sent for it if `fn` did not). `idempotent`: repeating the whole transaction after its
   * COMMIT's outcome was lost changes nothing more (it is then repeated on a fresh connection). Absent elsewhere.
   */
  rounds?<T>(fn: (send: SendRound) => Promise<T>, idempotent: boolean): Promise<T>;
  /** SQLite: run a read-only procedure whose answer nobody needs with the next request that crosses to the engine. */
  tell?<A>(proc: Proc<A, unknown>, args: A): void;
  /**
   * SQLite: how many writes other than procedures that report credit (Proc.reportsCredit) have finished: what the
   * main thread knows of credit from before the latest of them is to be read again.
   */
  readonly foreignWrites?: number;
  close(): Promise<void>;
}

/** Send one message of statements (Db.rounds); resolves with the rows each returned, in order. */
export type SendRound = (
  steps: ReadonlyArray<Pick<Step, 'sql' | 'params'>>,
  commit?: boolean,
) => Promise<Array<Array<Record<string, unknown>>>>;

/** One statement a procedure asks its driver to run. */
export interface Step {
  kind: 'all' | 'get' | 'run';
  sql: Sql;
  params: readonly Param[];
}

/**
 * A procedure's statements. `holds` is the SQLite engine's book of credit reservations (./engine/holds.ts), given
 * only where the procedure runs inside that engine; procedures that need it run on SQLite only.
 */
export type ProcBody<A, R> = (args: A, holds?: HoldBook) => Generator<Step, R, unknown>;

/** Several calls of a procedure at once, in order: one answer each (Proc.many). */
export type ProcMany<A, R> = (args: readonly A[], holds?: HoldBook) => Generator<Step, R[], unknown>;

/** A transaction written once as a generator of statements, so that any driver can run it where it likes. */
export interface Proc<A, R> {
  /** Key in the registry (src/store/procedures.ts) by which the worker finds it. */
  name: string;
  body: ProcBody<A, R>;
  /**
   * Applying it twice changes nothing more than once (so a driver may repeat it when a COMMIT's outcome is unknown).
   */
  idempotent?: boolean;
  /**
   * It writes nothing to the database (it reads, and may change the engine's holds): the SQLite engine runs it as
   * soon as it arrives instead of in the next group commit, so nobody waits for a commit it does not need.
   */
  readOnly?: boolean;
  /**
   * What it changes of accounts' and keys' credit it reports in its result, so it leaves what the main thread knows
   * of their credit (the credit plugin's holds) as it was; any other write makes the main thread read credit again.
   */
  reportsCredit?: boolean;
  /**
   * Its arguments in a compact form for the SQLite worker's messages and redo log: an array rather than objects. A
   * structured clone writes every key of every object it sends, and those keys were most of a settlement's bytes.
   * `unpack(pack(a))` gives back everything the body reads of `a`.
   */
  wire?: ProcWire<A>;
  /**
   * Several calls at once, in fewer statements: what running `body` on each in turn would leave and answer, except
   * that each answer may report credit as the last of them leaves it. The SQLite engine runs the consecutive calls of
   * a group commit through it (one that throws sends them back to `body`, each in its own savepoint).
   */
  many?: ProcMany<A, R>;
  /**
   * SQLite only: a table a row trigger stages rows in, that this procedure (called with no arguments) folds into what
   * they stand for and empties. The engine runs it at the end of every batch of writes and before every commit,
   * whenever that table has a row, so that no reader and no commit ever sees the staged rows unfolded: a trigger's
   * work per row is one insert, the fold's one grouped statement per batch (decision 0037). PostgreSQL has statement
   * triggers and never runs it.
   */
  foldsStaged?: string;
}

/** How a procedure's arguments travel packed (Proc.wire). */
export interface ProcWire<A> {
  pack(args: A): unknown[];
  unpack(packed: unknown[]): A;
  /**
   * The packed arguments as JSON text when JSON carries all the procedure reads of them, else null (the ahead log
   * then asks redo-codec's general check): knowing the shape, it need not walk what JSON carries by construction.
   */
  json?(packed: unknown[]): string | null;
}

/** Throw from a procedure to roll it back and answer `value` (an expected refusal, not a failure). */
export class Rollback<R> extends Error {
  constructor(readonly value: R) {
    super('rollback');
  }
}

export function* all<T>(sql: Sql, params: readonly Param[] = []): Generator<Step, T[], unknown> {
  return (yield { kind: 'all', sql, params }) as T[];
}
export function* get<T>(sql: Sql, params: readonly Param[] = []): Generator<Step, T | undefined, unknown> {
  return (yield { kind: 'get', sql, params }) as T | undefined;
}
export function* run(sql: Sql, params: readonly Param[] = []): Generator<Step, RunResult, unknown> {
  return (yield { kind: 'run', sql, params }) as RunResult;
}

/** Drive a procedure's statements one by one through an async Db (already inside a transaction). */
export async function driveAsync<A, R>(proc: Proc<A, R>, args: A, t: Db): Promise<R> {
  const gen = proc.body(args);
  let next = gen.next();
  while (!next.done) {
    const s = next.value;
    const out =
      s.kind === 'all'
        ? await t.all(s.sql, s.params)
        : s.kind === 'get'
          ? await t.get(s.sql, s.params)
          : await t.run(s.sql, s.params);
    next = gen.next(out);
  }
  return next.value;
}

/** Multi-row INSERTs of up to this many rows each (64, then 16, 4 and 1): a few statement texts, few statements. */
const ROW_CHUNKS = [64, 16, 4, 1];
/** The statement texts made so far, by the column list (a constant of its caller) and the number of rows. */
const insertTexts = new WeakMap<readonly string[], Map<number, string>>();

/**
 * `rows` into `table`'s `columns` (each row a value for each column, `columns` a constant), in as few statements as
 * ROW_CHUNKS allow.
 */
export function* insertRows(
  table: string,
  columns: readonly string[],
  rows: readonly Param[][],
): Generator<Step, void, unknown> {
  let texts = insertTexts.get(columns);
  if (!texts) insertTexts.set(columns, (texts = new Map()));
  for (let at = 0; at < rows.length;) {
    const n = ROW_CHUNKS.find((c) => c <= rows.length - at) ?? 1;
    let sql = texts.get(n);
    if (sql === undefined) {
      const row = `(${columns.map(() => '?').join(', ')})`;
      sql = `INSERT INTO ${table} (${columns.join(', ')}) VALUES ${Array<string>(n).fill(row).join(', ')}`;
      texts.set(n, sql);
    }
    // Pushed one by one: Array.prototype.flat took ~4 us a settlement in the store's worker (its generic path).
    const params: Param[] = [];
    for (const end = at + n; at < end; at++) for (const p of rows[at]) params.push(p);
    yield* run(sql, params);
  }
}

/** Run a procedure inside an open transaction, in a savepoint so that a Rollback undoes only its own statements. */
export async function callNested<A, R>(t: Db, proc: Proc<A, R>, args: A): Promise<R> {
  await t.exec('SAVEPOINT proc');
  try {
    const out = await driveAsync(proc, args, t);
    await t.exec('RELEASE proc');
    return out;
  } catch (e) {
    await t.exec('ROLLBACK TO proc');
    await t.exec('RELEASE proc');
    if (e instanceof Rollback) return e.value as R;
    throw e;
  }
}

/** Run a procedure in its own transaction of `db`, answering a Rollback's value after rolling back. */
export async function callInTx<A, R>(db: Db, proc: Proc<A, R>, args: A): Promise<R> {
  try {
    return await db.tx((t) => driveAsync(proc, args, t));
  } catch (e) {
    if (e instanceof Rollback) return e.value as R;
    throw e;
  }
}

/** A statement spelled for each dialect by one function. */
export function spelled(f: (dialect: Dialect) => string): Sql {
  return { sqlite: f('sqlite'), postgres: f('postgres') };
}

export function pick(sql: Sql, dialect: Dialect): string {
  return typeof sql === 'string' ? sql : sql[dialect];
}

/**
 * `db.observe(fn)` for a Db that keeps its observer in `observer`: one observer is called directly, several through
 * one function that calls each.
 */
export function addObserver(db: { observer?: DbObserver }, fn: DbObserver): () => void {
  const list = observers.get(db) ?? [];
  observers.set(db, [...list, fn]);
  const set = () => {
    const now = observers.get(db) ?? [];
    db.observer =
      now.length === 0 ? undefined : now.length === 1 ? now[0] : (op, s, f) => now.forEach((o) => o(op, s, f));
  };
  set();
  return () => {
    observers.set(
      db,
      (observers.get(db) ?? []).filter((o) => o !== fn),
    );
    set();
  };
}
const observers = new WeakMap<object, DbObserver[]>();

/**
 * Time one store operation for the observer, if any. Not an async function: the operation's own promise, and one
 * handler when observed (every store call of a request passes here).
 */
export function observed<T>(
  db: { observer?: DbObserver },
  op: Parameters<DbObserver>[0],
  fn: () => Promise<T> | T,
): Promise<T> {
  const o = db.observer;
  const t = o ? nowMs() : 0;
  const p = callAsync(() => Promise.resolve(fn()));
  if (!o) return p;
  return p.then(
    (out) => {
      o(op, (nowMs() - t) / 1000, false);
      return out;
    },
    (e: unknown) => {
      o(op, (nowMs() - t) / 1000, true);
      throw e;
    },
  );
}
