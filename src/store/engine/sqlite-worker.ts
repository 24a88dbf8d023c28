import { parentPort, workerData } from 'node:worker_threads';
import { SqliteEngine } from './sqlite-engine';
import { AHEAD_COMMITTED_ID, type EngineReply, type EngineRequest } from './engine-protocol';
import { procedureRegistry } from '../procedures';
import { lowerThisThreadPriority } from './thread-priority';
import { aliasPublicModules } from '../../pipeline/public-modules';

/** The store's worker thread: owns the SQLite file connection; requests in batches, answers by id in batches. */
const port = parentPort;
if (!port) throw new Error('sqlite-worker runs as a worker thread');
lowerThisThreadPriority();
const data = workerData as { path: string; redo?: boolean; commitMs?: number; procedures?: string[] };
// Plugins' procedures, loaded before the redo log replays (a logged call names its procedure); a plugin's module that
// imports `model-gateway/plugin` gets this gateway's, as on the main thread.
aliasPublicModules();
const procedures = procedureRegistry(data.procedures ?? []);
// A commit or the redo log failed with writes acknowledged: the thread ends at once (the main thread fails what it
// waits for and starts another engine, which replays the log).
const fatal = (): never => process.exit(70);
// Answers of one turn (a group commit answers many) go back in one message.
let outbox: Array<{ id: number } & EngineReply> = [];
const answer = (m: { id: number } & EngineReply) => {
  outbox.push(m);
  if (outbox.length > 1) return;
  queueMicrotask(() => {
    const batch = outbox;
    outbox = [];
    port.postMessage(batch);
  });
};
const engine = new SqliteEngine(data.path, procedures, {
  redo: data.redo === true,
  commitMs: data.commitMs,
  fatal,
  aheadCommitted: (seq) => answer({ id: AHEAD_COMMITTED_ID, ok: true, value: seq }),
});
/** Id 0 is a request the main thread told, not asked: nobody waits for its answer. */
const ignore = () => undefined;
port.on('message', (batch: Array<{ id: number; req: EngineRequest }>) => {
  for (const m of batch) {
    // The reply keeps the id only: an entry of the ahead log is answered after the next flush, a few ms away, and
    // its arguments (the request's stored response among them) must not live that long.
    const id = m.id;
    engine.handle(m.req, id === 0 ? ignore : (r) => answer({ id, ...r }));
    if (m.req.op === 'close') queueMicrotask(() => port.close());
  }
  // The main thread sends its next batch on our next message. Without a transaction driven from there, queued writes
  // answer at the next flush; within one, what waits for its end is answered now with nothing, or the main thread
  // would hold back that end.
  // Writes acknowledged from the main thread's ahead log run a few ms later, together: the main thread's next message
  // must not wait for them either.
  if (outbox.length === 0 && (engine.drivenTxOpen || engine.waitingForTimer)) port.postMessage([]);
});
