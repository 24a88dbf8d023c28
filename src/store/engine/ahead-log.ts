import { closeSync, ftruncate, ftruncateSync, openSync } from 'node:fs';
import { jsonText } from './redo-codec';
import { frameRecord, frameText, writeAllv } from './redo-log';

/** The two files of the ahead log of the SQLite database at `dbPath`. */
export function aheadPaths(dbPath: string): [string, string] {
  return [`${dbPath}-ahead-0`, `${dbPath}-ahead-1`];
}

/** The log moves to its other file once the one it writes holds this much and the other is empty. */
const SWITCH_BYTES = 1 << 20;
/**
 * A file everything in which was answered is emptied once it holds this much: emptying it each time cost a request
 * ~13 us more than the write alone (ext4), and what stays is only read when an engine starts (it skips what ran).
 * The emptying itself runs off the event loop (an ftruncate of 256 KB took 0.2-0.4 ms on ext4, every ~370 requests
 * at c=1), in the other file's turn: writes never go to a file while it is being emptied.
 */
export const EMPTY_ABOVE = 256 << 10;
/**
 * Entries the engine may owe answers for: beyond that, calls wait for the engine (the worker's pace is the requests'
 * again). ~25 ms of settlements at 10,000 requests/s; without a bound, requests outran the worker and its messages
 * grew to thousands of entries (event-loop stalls of 75-104 ms in bench/store-ops.ts).
 */
export const MAX_UNANSWERED = 256;

interface AheadFile {
  fd: number;
  bytes: number;
  /** entries in it (or on their way to it) the engine has not answered yet */
  unanswered: number;
  /** the number of the last entry written to it */
  last: number;
  /** It is being emptied (an ftruncate in libuv's thread pool): nothing is written to it until that ends. */
  emptying: boolean;
  /** close() came while it was being emptied: told once that ends and its descriptor is closed. */
  whenClosed: (() => void) | null;
}

/**
 * The main thread's ahead log: the calls it acknowledges before the store's worker thread has run them (a request's
 * settlement), so that no request waits for the worker (two thread crossings, and whatever the worker is busy with).
 * Each entry is numbered and written, with the others of the same event-loop turn, in one write call (into the page
 * cache: a SIGKILL cannot lose it) before its caller hears it is done; the worker then runs it like any call and
 * answers; run with other writes, it is logged in the worker's own redo log (./redo-log.ts) too, else only this log
 * holds it until the engine says it committed (`committed`), after which this copy is no longer needed.
 *
 * Two files take turns, each emptied once everything in it was answered and committed (and it holds EMPTY_ABOVE), so
 * the log stays small under any load. The engine reads both whenever it starts (./sqlite-engine.ts) and runs,
 * after its own redo log, every entry numbered above the last it committed or logged; an entry sent to a worker that
 * died is sent again, and the next runs it from the files before anything else, and skips it when it comes. Only
 * the engine that holds the redo log's lock starts one (SqliteDb.startAhead).
 */
export class AheadLog {
  private readonly files: AheadFile[];
  private current = 0;
  private seq: number;
  private readonly where = new Map<number, AheadFile>();
  private pending: Buffer[] = [];
  /** This turn's entries are written in one call: one promise for all of them, settled by flush. */
  private turn: { written: Promise<void>; resolve: () => void; reject: (e: unknown) => void } | null = null;
  private broken: unknown = null;
  /** The last entry the engine has committed. */
  private committedSeq: number;
  private closed = false;

  /**
   * `lastSeq`: the last entry the engine has run; the files are empty (the engine ran what they held when it started).
   */
  constructor(dbPath: string, lastSeq: number) {
    this.files = aheadPaths(dbPath).map((p) => {
      const fd = openSync(p, 'a');
      ftruncateSync(fd, 0);
      return { fd, bytes: 0, unanswered: 0, last: 0, emptying: false, whenClosed: null };
    });
    this.seq = lastSeq;
    this.committedSeq = lastSeq;
  }

  /**
   * false once a write failed (a full disk), and while MAX_UNANSWERED entries wait for the engine: then a call waits
   * for the engine's answer, as without a log, so that a worker slower than the requests holds them back.
   */
  get usable(): boolean {
    return this.broken === null && this.where.size < MAX_UNANSWERED;
  }

  /**
   * Number a call of procedure `proc` with its packed arguments and write it with this turn's others: `written`
   * resolves once it is in the file, and rejects if the write failed (the caller then waits for the engine's answer
   * instead). `text`: the arguments as JSON text, written into the entry as they are (null where JSON would not
   * carry them exactly: redo-codec.ts), for the caller to send on to the engine as they are too. `known`: that text
   * as the procedure's own wire made it (ProcWire.json); null or left out, the general check decides.
   */
  add(
    proc: string,
    packed: unknown[],
    known?: string | null,
  ): { seq: number; written: Promise<void>; text: string | null } {
    const seq = ++this.seq;
    // The turn's first entry may move the log to its other file; the rest of the turn's go where it went.
    if (this.files[this.current].bytes >= SWITCH_BYTES) this.moveToOther();
    const file = this.files[this.current];
    const text = known ?? jsonText(packed);
    // The record ({ seq, entries: [{ proc, packed, ahead }] }) written around the arguments' text, stringified once.
    const buf =
      text === null
        ? frameRecord({ seq, entries: [{ proc, packed, ahead: seq }] })
        : frameText([`{"seq":${seq},"entries":[{"proc":${JSON.stringify(proc)},"packed":`, text, `,"ahead":${seq}}]}`]);
    file.bytes += buf.length;
    file.unanswered++;
    file.last = seq;
    this.where.set(seq, file);
    this.pending.push(buf);
    return { seq, written: (this.turn ??= this.newTurn()).written, text };
  }

  /** The engine answered entry `seq` (ran it, or refused it). */
  answered(seq: number): void {
    const file = this.where.get(seq);
    if (!file) return;
    this.where.delete(seq);
    file.unanswered--;
    this.empty(file);
  }

  /**
   * The engine committed every entry up to `seq`: what it ran from this log alone is in no redo log, so a file is
   * emptied only once all of it is answered and committed.
   */
  committed(seq: number): void {
    if (seq <= this.committedSeq) return;
    this.committedSeq = seq;
    for (const f of this.files) this.empty(f);
  }

  /**
   * Move the log's writes to its other file, when no turn is half written and that file is free: nothing in it waits
   * for an answer, it is (nearly) empty and not being emptied. Whether it moved.
   */
  private moveToOther(): boolean {
    const other = this.files[1 - this.current];
    if (this.pending.length > 0 || other.emptying || other.unanswered > 0 || other.bytes >= EMPTY_ABOVE) return false;
    this.current = 1 - this.current;
    return true;
  }

  /**
   * Empty `file` once everything in it was answered and committed. The file the log writes to is left for the other
   * first (when that one is free, else later), so that the ftruncate, in libuv's thread pool, never races a write.
   */
  private empty(file: AheadFile): void {
    if (this.closed || file.emptying || file.unanswered > 0 || file.bytes < EMPTY_ABOVE) return;
    if (file.last > this.committedSeq) return;
    if (file === this.files[this.current] && !this.moveToOther()) return;
    file.emptying = true;
    ftruncate(file.fd, 0, (e) => {
      file.emptying = false;
      if (!e) file.bytes = 0; // else kept: its entries are numbered, and an engine skips what it has run
      if (file.whenClosed) {
        closeQuietly(file.fd);
        return file.whenClosed();
      }
      this.empty(this.files[this.current]); // it may have waited for this one to be free
    });
  }

  /** A turn's first entry: its promise, and its write at the end of the turn. */
  private newTurn(): NonNullable<AheadLog['turn']> {
    let resolve!: () => void;
    let reject!: (e: unknown) => void;
    const written = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
    setImmediate(() => this.flush());
    return { written, resolve, reject };
  }

  /** Write this turn's entries (all to one file: see add) in one write call. */
  private flush(): void {
    const turn = this.turn!;
    const bufs = this.pending;
    this.turn = null;
    this.pending = [];
    try {
      if (this.broken !== null) throw this.broken;
      const file = this.files[this.current];
      writeAllv(file.fd, bufs);
    } catch (e) {
      this.broken = e;
      turn.reject(e);
      return;
    }
    turn.resolve();
  }

  /**
   * Close its files. An emptying under way ends first (its descriptor is closed then): awaited, a log opened on the
   * same files afterwards cannot have that truncate land on its entries.
   */
  async close(): Promise<void> {
    this.closed = true;
    const ending: Array<Promise<void>> = [];
    for (const f of this.files) {
      if (f.emptying) ending.push(new Promise((r) => (f.whenClosed = r)));
      else closeSync(f.fd);
    }
    await Promise.all(ending);
  }
}

/** Close a descriptor from a callback, where a throw would end the process. */
function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed: nothing left to release
  }
}
