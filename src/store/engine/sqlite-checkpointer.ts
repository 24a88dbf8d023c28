import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { lowerThisThreadPriority } from './thread-priority';

/** What the checkpointer answers: the WAL's frames and how many of them are now in the database file. */
export type CheckpointReply = { ok: true; log: number; checkpointed: number } | { ok: false };

/**
 * The store's checkpointer thread: its own connection copies the WAL into the database file (PASSIVE: never waits
 * for, nor blocks, the writer), so that the copying and its two fsyncs stay off the thread whose commits requests
 * wait for. Asked by the engine (./sqlite-engine.ts) with 'checkpoint'; 'close' ends it.
 */
const port = parentPort;
if (!port) throw new Error('sqlite-checkpointer runs as a worker thread');
lowerThisThreadPriority();
const db = new Database((workerData as { path: string }).path, { fileMustExist: true });
// The checkpoint's fsyncs (WAL before, database after) follow this connection's setting: as the writer's.
db.pragma('synchronous = NORMAL');
port.on('message', (m: 'checkpoint' | 'close') => {
  if (m === 'close') {
    db.close();
    port.close();
    return;
  }
  let reply: CheckpointReply;
  try {
    const [r] = db.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number; checkpointed: number }>;
    reply = { ok: true, log: r.log, checkpointed: r.checkpointed };
  } catch {
    reply = { ok: false }; // busy or closing: the next round tries again
  }
  port.postMessage(reply);
});
