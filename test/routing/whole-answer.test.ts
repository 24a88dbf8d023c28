import { expect } from 'chai';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { Transport } from '../../src/transport/http';
import { SizeLimitError } from '../../src/transport/limits';
import { RequestAbort } from '../../src/pipeline/request-abort';
import { errors, isGatewayError } from '../../src/errors';
import type { ProviderConfig } from '../../src/config/types';
import type { WholeOptions } from '../../src/transport/whole-answer';

/**
 * Transport.sendWhole: an answer read whole without request()'s stream, through a real loopback server. What the
 * routing plugin's plain calls rely on: the answer as sent, its limits, its timeouts, and aborts before and after the
 * head that close the upstream's connection.
 */
describe('an upstream answer read whole (Transport.sendWhole)', function () {
  this.timeout(20_000);
  let server: Server;
  let origin: string;
  let handle: (req: IncomingMessage, res: ServerResponse) => void = () => undefined;
  /** Requests that reached the server, and connections it saw close. */
  let reached = 0;
  let closed = 0;
  const sockets = new Set<Socket>();
  let transport: Transport;
  const provider: ProviderConfig = { name: 'up', type: 'openai', max_connections: 4, connect_timeout_ms: 2000 };

  before(async () => {
    server = createServer((req, res) => {
      reached++;
      handle(req, res);
    });
    server.on('connection', (s: Socket) => {
      sockets.add(s);
      s.on('close', () => {
        closed++;
        sockets.delete(s);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  beforeEach(() => {
    reached = 0;
    closed = 0;
    transport = new Transport();
  });
  afterEach(async () => {
    await transport.close();
    for (const s of sockets) s.destroy();
  });
  after(async () => {
    await new Promise((r) => server.close(r));
  });

  const send = (opts: Partial<WholeOptions> = {}) =>
    transport.sendWhole(
      {
        url: `${origin}/v1/chat/completions`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      },
      provider,
      { signal: new RequestAbort(), headersTimeoutMs: 2000, bodyTimeoutMs: 2000, limit: () => 1024, ...opts },
    );
  const failure = (p: Promise<unknown>) =>
    p.then(
      () => expect.fail('resolved'),
      (e: unknown) => e,
    );
  const waitFor = async (check: () => boolean) => {
    for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(check()).to.equal(true);
  };

  it('gives the status, the headers and every byte of a chunked answer sent in pieces, after an early 103', async () => {
    handle = (_req, res) => {
      res.writeEarlyHints({ link: '</x>; rel=preload' });
      res.writeHead(201, { 'content-type': 'application/json', 'x-upstream': 'yes' });
      res.write('{"a":');
      setTimeout(() => res.end('"é"}'), 20);
    };
    const answer = await send();
    expect(answer.status).to.equal(201);
    expect(answer.headers['x-upstream']).to.equal('yes');
    expect(JSON.parse(answer.body.toString('utf8'))).to.deep.equal({ a: 'é' });
  });

  it("takes each status's own limit, and refuses an announced Content-Length over it before reading", async () => {
    let stall = true;
    handle = (_req, res) => {
      res.writeHead(500, { 'content-length': '2000' });
      // Announced, then 10 bytes and silence: only the announcement can end it before the body timeout.
      if (stall) res.write('x'.repeat(10));
      else res.end('x'.repeat(2000));
    };
    const started = Date.now();
    const e = await failure(send({ limit: (status) => (status >= 400 ? 100 : 10_000), bodyTimeoutMs: 5000 }));
    expect(e).to.be.instanceOf(SizeLimitError);
    expect((e as SizeLimitError).limit).to.equal(100);
    expect(Date.now() - started).to.be.below(1000);
    stall = false;
    expect((await send({ limit: () => 10_000 })).body.length).to.equal(2000);
  });

  it('cuts off a chunked answer that grows past the limit, and closes its connection', async () => {
    handle = (_req, res) => {
      res.writeHead(200);
      const timer = setInterval(() => res.write('y'.repeat(512)), 5);
      res.on('close', () => clearInterval(timer));
    };
    const e = await failure(send());
    expect(e).to.be.instanceOf(SizeLimitError);
    await waitFor(() => closed === 1);
  });

  it('fails an answer that stalls after its head with a body timeout, as a read error (unmapped)', async () => {
    handle = (_req, res) => {
      res.writeHead(200);
      res.write('{"a":');
    };
    const started = Date.now();
    const e = await failure(send({ bodyTimeoutMs: 200 }));
    expect((e as { code?: string }).code).to.equal('UND_ERR_BODY_TIMEOUT');
    expect(Date.now() - started).to.be.below(2000);
  });

  it('maps a failure before the head as send() does: a slow head is the upstream timeout', async () => {
    handle = () => undefined; // never answers
    const e = await failure(send({ headersTimeoutMs: 200 }));
    expect(isGatewayError(e) && e.code).to.equal('upstream_timeout');
  });

  it('an abort after the head fails with its reason and closes the connection', async () => {
    const abort = new RequestAbort();
    handle = (_req, res) => {
      res.writeHead(200);
      res.write('{"a":');
      setTimeout(() => abort.abort(errors.clientClosed()), 30);
    };
    const e = await failure(send({ signal: abort }));
    expect(isGatewayError(e) && e.code).to.equal(errors.clientClosed().code);
    await waitFor(() => closed === 1);
  });

  it('a request aborted before it is sent never reaches the upstream', async () => {
    const abort = new RequestAbort();
    abort.abort(errors.clientClosed());
    handle = (_req, res) => res.end('{}');
    const e = await failure(send({ signal: abort }));
    expect(isGatewayError(e) && e.code).to.equal(errors.clientClosed().code);
    await new Promise((r) => setTimeout(r, 50));
    expect(reached).to.equal(0);
  });

  it('refuses a header value undici would misreport before anything is sent', async () => {
    const e = await failure(
      transport.sendWhole(
        { url: `${origin}/v1/x`, method: 'POST', headers: { 'x-bad': 'a\nb' }, body: '{}' },
        provider,
        { signal: new RequestAbort(), headersTimeoutMs: 2000, bodyTimeoutMs: 2000, limit: () => 1024 },
      ),
    );
    expect(isGatewayError(e)).to.equal(true);
    expect(reached).to.equal(0);
  });
});
