import type Database from 'better-sqlite3';
import type { AheadRun } from './ahead-run';
import { UnknownProcedure, type EntryRunner } from './entry-runner';
import type { HoldBook } from './holds';
import { REDO_MARK, REDO_TABLE, type RedoEntry, type RedoLog } from './redo-log';

/** What the SQLite engine lends its start-up replay: its write connection, and how it runs and keeps what it runs. */
export interface ReplayEngine {
  db: Database.Database;
  entries: EntryRunner;
  holds: HoldBook;
  ahead: AheadRun;
  inSavepoint<T>(work: () => T): T;
  /** Fold what row triggers staged (Proc.foldsStaged) within the open transaction. */
  fold(): void;
}

/**
 * Run again what a redo log left by an engine that ended before its commit holds (records past the committed one),
 * as one transaction. Each of them succeeded once on the same state; one that fails now (another schema, a damaged
 * file) stops the store from opening, with the log kept, rather than losing an acknowledged write. Then what the
 * main thread's ahead log (`path`'s) holds that no engine ran. Returns the redo log's last record number.
 */
export function replayLogs(en: ReplayEngine, log: RedoLog, path: string): number {
  en.db.exec(REDO_TABLE);
  const [begin, commit, rollback] = ['BEGIN IMMEDIATE', 'COMMIT', 'ROLLBACK'].map((sql) => en.db.prepare(sql));
  const row = en.db.prepare('SELECT seq FROM gw_redo WHERE id = 1').get() as { seq: number } | undefined;
  let seq = row?.seq ?? 0;
  en.ahead.load();
  const todo = log.read().filter((r) => r.seq > seq);
  if (todo.length > 0) {
    begin.run();
    try {
      for (const r of todo) for (const e of r.entries) en.entries.run(e);
      for (const r of todo) en.ahead.ran(r.entries);
      seq = todo[todo.length - 1].seq;
      en.fold();
      en.db.prepare(REDO_MARK).run(seq);
      en.ahead.mark();
      commit.run();
    } catch (e) {
      if (en.db.inTransaction) rollback.run();
      log.close();
      const why = e instanceof Error ? e.message : String(e);
      throw new Error(`the store's redo log ${log.path} could not be replayed (kept as it is): ${why}`);
    }
  }
  en.holds.keep();
  log.clear();
  runAhead(en, en.ahead.pending(path), begin, commit);
  return seq;
}

/**
 * Run what the main thread acknowledged from its ahead log and no engine ran (after the redo log: everything it holds
 * was run before these), each in its own savepoint: one that fails now failed when first sent too, and is reported
 * and passed over.
 */
function runAhead(en: ReplayEngine, todo: RedoEntry[], begin: Database.Statement, commit: Database.Statement): void {
  if (todo.length === 0) return;
  begin.run();
  for (const e of todo) {
    try {
      en.inSavepoint(() => en.entries.run(e));
    } catch (err) {
      if (err instanceof UnknownProcedure) {
        en.db.exec('ROLLBACK');
        throw new Error(
          `the store's ahead log holds a call of ${err.message.replace('unknown ', '')}, which no plugin of the ` +
            'chain registers (kept as it is): configure the plugin that owns it',
        );
      }
      const why = err instanceof Error ? err.message : String(err);
      process.emitWarning(`an entry of the store's ahead log failed again and was passed over: ${why}`);
    }
    en.ahead.ran([e]);
  }
  en.fold();
  en.ahead.mark();
  commit.run();
  en.holds.keep();
}
