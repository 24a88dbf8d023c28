import type { Db } from './db';

/**
 * Whether a periodic refresh that only looks for other processes' changes should skip its round: `db` is a SQLite
 * store whose worker thread has stopped after idling, and a read would start it again (a thread and ~6 MB, kept for
 * the idle delay). On SQLite the only other writers are CLI commands; the next request wakes the worker, and the
 * round after it reads what they changed meanwhile. Never true on PostgreSQL or the memory store.
 */
export function storeResting(db: Db): boolean {
  return (db as Db & { workerRunning?: boolean }).workerRunning === false;
}
