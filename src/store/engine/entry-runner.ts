import type { Proc, Step } from '../db';
import type { HoldBook } from './holds';
import type { RedoEntry } from './redo-log';

type ProcEntry = Exclude<RedoEntry, { sql: string }>;

/**
 * A call names a procedure this engine does not have: its plugin is not in the chain (or another version's name). A
 * replay stops on it, the logs kept, rather than pass over a write that was acknowledged.
 */
export class UnknownProcedure extends Error {
  constructor(readonly procedure: string) {
    super(`unknown store procedure '${procedure}'`);
  }
}
/** A prepared statement of the write connection, as better-sqlite3 gives it. */
interface Prepared {
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}

/**
 * What the SQLite engine runs, live or replayed from its redo log: statements, and procedures by name with their
 * arguments as they crossed the thread (packed or not), on the write connection (`statement` prepares, and caches).
 */
export class EntryRunner {
  constructor(
    private readonly procs: ReadonlyMap<string, Proc<unknown, unknown>>,
    private readonly holds: HoldBook,
    private readonly statement: (sql: string) => Prepared,
  ) {}

  /** Run a procedure's statements (its body's, or its many's) on the write connection. */
  private drive<R>(gen: Generator<Step, R, unknown>): R {
    let next = gen.next();
    while (!next.done) {
      const step = next.value;
      const s = this.statement(typeof step.sql === 'string' ? step.sql : step.sql.sqlite);
      const params = step.params.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p));
      next = gen.next(step.kind === 'run' ? { changes: s.run(...params).changes } : s[step.kind](...params));
    }
    return next.value;
  }

  /** A statement, or a procedure by name with its arguments as they crossed the thread (packed or not), as logged. */
  run(e: RedoEntry): unknown {
    if ('sql' in e) return { changes: this.statement(e.sql).run(...e.params).changes };
    const proc = this.procOf(e);
    return this.drive(proc.body(this.argsOf(proc, e), this.holds));
  }

  /** Every entry in order, consecutive calls of a procedure that has a `many` form through it (Proc.many). */
  runAll(entries: readonly RedoEntry[]): unknown[] {
    const out: unknown[] = [];
    for (let i = 0; i < entries.length;) {
      const e = entries[i];
      const proc = 'proc' in e ? this.procOf(e) : undefined;
      let j = i + 1;
      while (proc?.many && j < entries.length && 'proc' in entries[j] && (entries[j] as ProcEntry).proc === proc.name)
        j++;
      if (j - i === 1 || !proc?.many) out.push(this.run(e));
      else {
        const args = (entries.slice(i, j) as ProcEntry[]).map((x) => this.argsOf(proc, x));
        const values = this.drive(proc.many(args, this.holds));
        if (values.length !== args.length)
          throw new Error(`store procedure '${proc.name}' answered ${values.length} of ${args.length}`);
        out.push(...values);
      }
      i = j;
    }
    return out;
  }

  private procOf(e: ProcEntry): Proc<unknown, unknown> {
    const proc = this.procs.get(e.proc);
    if (!proc) throw new UnknownProcedure(e.proc);
    return proc;
  }

  /** A fold (Proc.foldsStaged): its body, with no arguments. */
  fold(proc: Proc<unknown, unknown>): void {
    this.drive(proc.body(undefined, this.holds));
  }

  /** A procedure's arguments from its entry: packed (Proc.wire), or as they were (also an older version's record). */
  private argsOf(proc: Proc<unknown, unknown>, e: ProcEntry): unknown {
    if (!('packed' in e)) return e.args;
    if (!proc.wire) throw new Error(`store procedure '${e.proc}' has no packed form`);
    return proc.wire.unpack(e.packed);
  }
}
