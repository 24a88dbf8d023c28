import type { Server } from 'node:http';
import type { Socket } from 'node:net';

const BODY = JSON.stringify({
  error: {
    message: 'Too many concurrent connections from this address',
    type: 'rate_limit_error',
    param: '',
    code: 'too_many_connections',
  },
});
const REFUSAL =
  'HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\n' +
  `Content-Length: ${Buffer.byteLength(BODY)}\r\n\r\n${BODY}`;

/**
 * At most `max` open connections per client address: one more is answered 429 (the spec's
 * error object) and closed before any of its bytes are parsed. Behind a reverse proxy every
 * client shares the proxy's address: raise the cap there, or set 0 (no cap).
 */
export function capConnectionsPerAddress(server: Server, max: number): void {
  if (max <= 0) return;
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const addr = socket.remoteAddress ?? '';
    const n = (open.get(addr) ?? 0) + 1;
    if (n > max) {
      socket.end(REFUSAL);
      socket.destroySoon();
      return;
    }
    open.set(addr, n);
    socket.once('close', () => {
      const left = (open.get(addr) ?? 1) - 1;
      if (left <= 0) open.delete(addr);
      else open.set(addr, left);
    });
  });
}
