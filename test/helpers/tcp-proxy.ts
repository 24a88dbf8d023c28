import { connect, createServer, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Stop forwarding: bytes in either direction are dropped, new connections are accepted and never answered. */
  blackhole(): void;
  /** Forward again; connections held while blackholed are reset (as a network that comes back does to them). */
  restore(): void;
  close(): Promise<void>;
}

/** A loopback TCP proxy the test controls, in front of a server (e.g. PostgreSQL) it must not stop itself. */
export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  let holed = false;
  const held = new Set<Socket>();
  const live = new Set<Socket>();
  const server: Server = createServer((client) => {
    client.on('error', () => undefined);
    live.add(client);
    client.on('close', () => (live.delete(client), held.delete(client)));
    if (holed) {
      held.add(client);
      client.on('data', () => undefined);
      return;
    }
    const upstream = connect(targetPort, targetHost);
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('data', (d) => {
      if (!holed) upstream.write(d);
      else held.add(client);
    });
    upstream.on('data', (d) => {
      if (!holed) client.write(d);
      else held.add(client);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as { port: number }).port,
    blackhole() {
      holed = true;
      for (const s of live) held.add(s);
    },
    restore() {
      holed = false;
      for (const s of held) s.destroy();
      held.clear();
    },
    async close() {
      for (const s of live) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
