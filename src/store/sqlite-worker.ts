import { parentPort, workerData } from 'node:worker_threads';
import { SqliteEngine, type EngineRequest } from './sqlite-engine';
import { procedures } from './procedures';

/** The store's worker thread: owns the SQLite file connection; one message in, one answer out, by id. */
const port = parentPort;
if (!port) throw new Error('sqlite-worker runs as a worker thread');
const engine = new SqliteEngine((workerData as { path: string }).path, procedures);
port.on('message', (m: { id: number; req: EngineRequest }) => {
  engine.handle(m.req, (r) => port.postMessage({ id: m.id, ...r }));
  if (m.req.op === 'close') port.close();
});
