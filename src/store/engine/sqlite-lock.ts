import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type Database from 'better-sqlite3';

/** A second gateway process on a SQLite file another one writes: it must not start. */
export class StoreFileInUse extends Error {}

/** The lock of each file this process writes as its gateway, with how many stores of this process hold it. */
const held = new Map<string, { conn: Database.Database; refs: number }>();

/** The lock file beside the database: `<db>-gateway.lock`. */
export function writerLockPath(dbPath: string): string {
  return `${dbPath}-gateway.lock`;
}

/**
 * Make this process the one gateway process of the SQLite file at `dbPath`, or throw StoreFileInUse naming it.
 *
 * A gateway keeps its credit holds (and its redo and ahead logs) in its own memory: a second process on the same file
 * would not see the first's reservations (and would run the first's ahead log as its own), so a limit could be
 * overspent. The lock is an exclusive SQLite lock (a POSIX advisory lock, which the kernel drops with the process: a
 * crashed gateway never blocks the next start) on `<db>-gateway.lock`, an empty file beside the database that nothing
 * reads or writes; the database itself stays in WAL mode for the worker thread's connections. It is held by the main
 * thread for as long as the store is open (the worker thread stops when idle, and with it any lock it held). Stores
 * of one process share it (tests open a file twice); CLI commands do not take it: they keep no holds.
 *
 * Returns the release (the last store of the process that closes drops the lock).
 */
export function lockWriter(dbPath: string): () => void {
  const key = resolve(dbPath);
  let entry = held.get(key);
  if (!entry) {
    mkdirSync(dirname(key), { recursive: true });
    // Loaded only here: the main thread otherwise never loads better-sqlite3 (the engine runs in the worker).
    const Sqlite = require('better-sqlite3') as typeof import('better-sqlite3');
    const conn = new Sqlite(writerLockPath(key), { timeout: 0 });
    try {
      conn.pragma('journal_mode = MEMORY'); // nothing is ever written to it: no journal file beside it
      conn.pragma('locking_mode = EXCLUSIVE');
      conn.exec('BEGIN EXCLUSIVE');
    } catch (e) {
      conn.close();
      const code = (e as { code?: unknown }).code;
      if (code !== 'SQLITE_BUSY' && code !== 'SQLITE_LOCKED') throw e;
      throw new StoreFileInUse(
        `the SQLite store ${key} is in use by another gateway process (it holds ${writerLockPath(key)}): ` +
          'only one process may serve a SQLite file, for its credit reservations live in that process. ' +
          'Stop the other process, or to run several gateway processes on one store use PostgreSQL ' +
          '(store.driver: postgres, store.url)',
      );
    }
    entry = { conn, refs: 0 };
    held.set(key, entry);
  }
  entry.refs++;
  const mine = entry;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--mine.refs > 0) return;
    held.delete(key);
    mine.conn.close();
  };
}
