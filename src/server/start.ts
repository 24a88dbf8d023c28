import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { flushLogger } from '../logger';
import type { GatewayConfig } from '../config/types';
import { createApp, type CreateOptions, type Gateway } from '../app';
import { capConnectionsPerAddress } from './connection-cap';
import { applyServerTimeouts, checkingIntervalMs } from './timeouts';

export interface RunningGateway extends Gateway {
  server: Server;
  url: string;
  /** Stop accepting, let streams finish up to the grace period, end the rest, close everything. */
  stop(): Promise<void>;
}

export async function startGateway(config: GatewayConfig, opts: CreateOptions & { port?: number } = {}): Promise<RunningGateway> {
  const gw = await createApp(config, opts);
  const server = createServer({ connectionsCheckingInterval: checkingIntervalMs(config.server) }, gw.app.callback());
  applyServerTimeouts(server, config.server);
  capConnectionsPerAddress(server, config.server.max_connections_per_ip);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? config.server.port, config.server.host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeIdleConnections();
      await gw.lifecycle.drain(config.server.shutdown_grace_ms);
      server.closeAllConnections();
      await closed;
      await gw.close();
    })());
  return { ...gw, server, url: `http://${host}:${addr.port}`, stop };
}

/** SIGTERM/SIGINT: a graceful stop, then exit 0. A second signal exits at once. */
export function handleSignals(gw: RunningGateway, logger: Logger): void {
  let signalled = false;
  const onSignal = (sig: NodeJS.Signals) => {
    if (signalled) process.exit(1);
    signalled = true;
    logger.info({ signal: sig, openStreams: gw.lifecycle.openStreams }, 'shutting down');
    gw.stop().then(
      () => {
        logger.info('stopped');
        flushLogger(logger, () => process.exit(0));
      },
      (e: unknown) => {
        logger.error({ err: e }, 'error while stopping');
        flushLogger(logger, () => process.exit(1));
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
