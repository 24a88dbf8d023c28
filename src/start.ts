import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { flushLogger } from './logger';
import type { GatewayConfig } from './config/types';
import { createApp, type CreateOptions, type Gateway } from './app';
import { capConnectionsPerAddress } from './http/connection-cap';
import { applyServerTimeouts, checkingIntervalMs } from './http/timeouts';
import { LISTENING } from './pipeline/hooks';

export interface RunningGateway extends Gateway {
  server: Server;
  url: string;
  /**
   * Drain: requests and streams may finish up to the grace period (new requests meanwhile get 503 shutting_down),
   * then the rest are stopped (503 or an error event), the listener closes, and everything else.
   */
  stop(): Promise<void>;
}

export async function startGateway(
  config: GatewayConfig,
  opts: CreateOptions & { port?: number } = {},
): Promise<RunningGateway> {
  const gw = await createApp(config, opts);
  const server = createServer({ connectionsCheckingInterval: checkingIntervalMs(config.server) }, gw.listener);
  applyServerTimeouts(server, config.server);
  capConnectionsPerAddress(server, config.server.max_connections_per_ip);
  const port = opts.port ?? config.server.port;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, config.server.host, () => resolve());
    });
  } catch (e) {
    await gw.close();
    throw listenError(e, config.server.host, port);
  }
  // Only now, listening with every plugin set up: a first start's keys (the auth plugin's), once.
  for (const hook of gw.services.shared.get(LISTENING) ?? []) await hook();
  const addr = server.address() as AddressInfo;
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      // While draining the listener stays open: what is already in the accept queue, and any request on a kept-alive
      // connection, is answered 503 shutting_down (Retry-After, Connection: close) instead of being reset.
      await gw.lifecycle.drain(config.server.shutdown_grace_ms);
      const closed = new Promise<void>((r) => server.close(() => r()));
      server.closeIdleConnections();
      await settleConnections(server, 1000);
      server.closeAllConnections();
      await closed;
      await gw.close();
    })());
  return { ...gw, server, url: `http://${host}:${addr.port}`, stop };
}

/** The listen error for people: an address in use names PORT and server.port, the two ways to choose another. */
function listenError(e: unknown, host: string, port: number): Error {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE')
    return new Error(
      `${host}:${port} is already in use (another gateway, or another program, listens there): stop it, or choose ` +
        `another port with the PORT environment variable (PORT=8081 npm start) or server.port in the config`,
    );
  if (code === 'EACCES')
    return new Error(
      `${host}:${port} may not be bound by this user: choose a port above 1023 with PORT or server.port`,
    );
  return e instanceof Error ? e : new Error(String(e));
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

/**
 * Give connections that are still mid-request (a 503 being written) a moment to finish, closing each as it goes idle.
 */
async function settleConnections(server: Server, maxMs: number): Promise<void> {
  const until = Date.now() + maxMs;
  for (;;) {
    const open = await new Promise<number>((r) => server.getConnections((_e, n) => r(n)));
    if (open === 0 || Date.now() >= until) return;
    await new Promise((r) => setTimeout(r, 20));
    server.closeIdleConnections();
  }
}
