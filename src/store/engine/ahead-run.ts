import { aheadPaths } from './ahead-log';
import { readRecords, type RedoEntry } from './redo-log';

/** Where the engine keeps the last entry of the main thread's ahead log it committed. */
const AHEAD_TABLE = 'CREATE TABLE IF NOT EXISTS gw_ahead (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL)';
const AHEAD_MARK = 'INSERT INTO gw_ahead (id, seq) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET seq = excluded.seq';

interface Runs {
  exec(sql: string): unknown;
  prepare(sql: string): { run(...params: unknown[]): unknown; get(...params: unknown[]): unknown };
}

/**
 * The SQLite engine's side of the main thread's ahead log (./ahead-log.ts): the last of its entries the engine has
 * run and logged, committed beside the redo log's mark; an entry numbered at or below it has run (entries come in
 * order, and one the engine refused is not sent again).
 *
 * A flush of ahead entries only does not write them to the engine's redo log: the ahead log's files already hold
 * them, and keep them until the main thread hears they committed (`commitDone`). A replay runs the redo log, then
 * what the ahead files hold above the committed mark: so that it runs them in the order they ran, a flush with any
 * other write first commits the entries the open transaction holds `unlogged`, and logs all of its own.
 */
export class AheadRun {
  last = 0;
  private marker: ReturnType<Runs['prepare']> | null = null;
  /** The open transaction holds entries that are in no redo log (the ahead log's files keep them). */
  unlogged = false;
  /** The last entry committed, as the main thread was last told it. */
  private told = 0;

  /** `committed` is told the last entry committed, each time a commit moves it (EngineOptions.aheadCommitted). */
  constructor(
    private readonly db: Runs,
    private readonly committed?: (seq: number) => void,
  ) {}

  /** Read the committed mark (the engine holds the redo log: it then reads the ahead log's files). */
  load(): void {
    this.db.exec(AHEAD_TABLE);
    const row = this.db.prepare('SELECT seq FROM gw_ahead WHERE id = 1').get() as { seq: number } | undefined;
    this.last = row?.seq ?? 0;
    this.told = this.last;
  }

  /** These entries ran, and are in the redo log unless `unlogged`. */
  ran(entries: readonly RedoEntry[], unlogged = false): void {
    for (const e of entries) if ('ahead' in e && e.ahead !== undefined && e.ahead > this.last) this.last = e.ahead;
    if (unlogged) this.unlogged = true;
  }

  /** The transaction carrying the mark committed: tell the main thread if the last entry committed moved. */
  commitDone(): void {
    this.unlogged = false;
    if (this.last <= this.told) return;
    this.told = this.last;
    this.committed?.(this.last);
  }

  /** Write the mark into the transaction about to commit. */
  mark(): void {
    this.marker ??= this.db.prepare(AHEAD_MARK); // prepared once: a commit writes it every few ms
    this.marker.run(this.last);
  }

  /** What the ahead log's files of the database at `dbPath` hold that has not run, in order. */
  pending(dbPath: string): RedoEntry[] {
    const records = aheadPaths(dbPath).flatMap((p) => readRecords(p));
    return records
      .filter((r) => r.seq > this.last)
      .sort((a, b) => a.seq - b.seq)
      .flatMap((r) => r.entries.map((e) => ({ ...e, ahead: r.seq })));
  }
}
