import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import type { GatewayConfig } from './config/types';

/** Why a configuration cannot run several workers, or undefined when it can. */
export function workersProblem(config: GatewayConfig, workers: number): string | undefined {
  if (workers <= 1 || config.store.driver === 'postgres') return undefined;
  return (
    `server.workers: ${workers} needs the PostgreSQL store (store.driver: postgres, store.url): ` +
    `the ${config.store.driver} store belongs to one process`
  );
}

/** What a worker sends its primary once it listens and its first-start work is done. */
export const WORKER_READY = 'gateway:ready';

/**
 * Run `count` gateway processes on one port (node's cluster: this process listens for them and hands each a share of
 * the connections). The first is started alone, so that first-start work (the bootstrap account) happens once; the
 * others follow once it is ready. A worker that dies is started again after a pause that grows with each death in a
 * row; SIGTERM or SIGINT stops every worker gracefully (each drains its streams) and then this process.
 */
export function runWorkers(count: number, logger: Logger): void {
  let stopping = false;
  let deaths = 0;
  const fork = (): Worker => {
    const w = cluster.fork();
    w.once('listening', () => (deaths = 0));
    return w;
  };
  const first = fork();
  // Not at 'listening': a first start's keys are made just after the listen (startGateway's listening hooks); the
  // others wait for the first's READY so that they read what it stored instead of making their own.
  const onReady = (m: unknown) => {
    if (m !== WORKER_READY) return;
    first.off('message', onReady);
    for (let i = 1; i < count; i++) fork();
    logger.info({ workers: count }, 'gateway workers listening');
  };
  first.on('message', onReady);
  cluster.on('exit', (w, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
      return;
    }
    deaths++;
    const delayMs = Math.min(30_000, 500 * 2 ** Math.min(deaths, 6));
    logger.error({ worker: w.id, code, signal, restartInMs: delayMs }, 'gateway worker died; starting another');
    setTimeout(() => !stopping && fork(), delayMs).unref();
  });
  const stop = (sig: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    logger.info({ signal: sig }, 'stopping the gateway workers');
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
