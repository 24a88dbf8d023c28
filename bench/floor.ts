/**
 * The floor: the least a JSON-aware proxy in Node can do, to measure the gateway against.
 * node:http in front of an undici Pool; the request body is parsed and re-serialised (the
 * model renamed), a completion is parsed and re-serialised too, a stream is piped as it comes.
 * Usage: node floor.js <upstream origin>; prints {"url": ...} when listening.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';

const upstream = new Pool(process.argv[2], { connections: 64, pipelining: 1 });

const server = createServer((req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (c: Buffer) => parts.push(c));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { model: string; stream?: boolean };
    // The stream bench's models name their chunk count (oa/chunks-1000): the upstream reads it from the model.
    body.model = body.model.startsWith('oa/') ? body.model.slice(3) : 'bench-model';
    upstream
      .request({
        path: '/v1/chat/completions',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      .then(async (up) => {
        if (body.stream) {
          res.writeHead(up.statusCode, { 'content-type': 'text/event-stream' });
          for await (const chunk of up.body) res.write(chunk);
          res.end();
        } else {
          const text = JSON.stringify(await up.body.json());
          res.writeHead(up.statusCode, {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(text),
          });
          res.end(text);
        }
      })
      .catch(() => res.writeHead(502).end());
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
process.on('SIGINT', () => process.exit(0));
