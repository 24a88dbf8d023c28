import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';

/**
 * Start the store's worker module `name` (a file beside this one). Under tsx (tests, `npm run dev`) the worker
 * registers tsx itself; under dist it loads the compiled .js.
 */
export function startStoreWorker(name: string, workerData: unknown): Worker {
  const file = join(__dirname, `${name}${extname(__filename)}`);
  return file.endsWith('.ts')
    ? new Worker(`require(${JSON.stringify(require.resolve('tsx/cjs'))}); require(${JSON.stringify(file)});`, {
        eval: true,
        workerData,
      })
    : new Worker(file, { workerData });
}
