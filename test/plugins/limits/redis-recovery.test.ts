import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MOCK_MODEL, startTestGateway, testConfig, postJson, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../../helpers/accounts';
import { MockUpstream } from '../../helpers/mock-upstream';
import { gate, heldStream, upstreamModel, upstreamProvider } from './helpers';

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** This test's own redis-server (never the shared one), its data in `dir` (loaded again when started there again). */
async function startRedis(port: number, dir: string): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--dbfilename', 'dump.rdb', '--save', ''],
    { stdio: 'ignore' },
  );
  for (let i = 0; i < 100; i++) {
    if ((await redisCommand(port, 'PING').catch(() => '')) === '+PONG') return child;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error('redis-server did not start');
}

/** One command in RESP over a fresh socket; resolves with the first reply line ('' when the server closes first). */
function redisCommand(port: number, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = connect(port, '127.0.0.1', () =>
      c.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`),
    );
    let got = '';
    c.setTimeout(5000, () => c.destroy(new Error('redis did not answer')));
    c.on('data', (d) => {
      got += d.toString();
      if (got.includes('\r\n')) {
        c.end();
        resolve(got.split('\r\n')[0]);
      }
    });
    c.on('close', () => resolve(got.split('\r\n')[0]));
    c.on('error', reject);
  });
}

async function stopRedis(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGCONT');
  child.kill('SIGKILL');
  await exited;
}

async function until(what: string, check: () => Promise<boolean>, ms = 15000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const ready = async (gw: TestGateway) => ((await (await fetch(`${gw.url}/ready`)).json()) as { status: string }).status;
const storeUp = async (gw: TestGateway) =>
  /^gateway_limits_store_up (\d)/m.exec(await (await fetch(`${gw.url}/metrics`)).text())?.[1];
const code = async (r: Response) => ((await r.json()) as { error: { code: string } }).error.code;

/** A gateway counting in this test's Redis, failing closed (so an answer tells whether Redis admitted it). */
async function gateway(port: number, upstream: MockUpstream, timeoutMs: number): Promise<TestGateway> {
  return startTestGateway(
    testConfig(
      {
        providers: [{ name: 'mock', type: 'mock' }, upstreamProvider('up', upstream)],
        models: [{ ...MOCK_MODEL, pricing: { prompt: 0, completion: 0 } }, upstreamModel('up/slow', 'up')],
        plugins: [
          'metrics',
          'auth',
          {
            limits: {
              store: 'redis',
              fail_mode: 'closed',
              redis: { url: `redis://127.0.0.1:${port}`, prefix: 'rec:', timeout_ms: timeoutMs },
            },
          },
          'routing',
        ],
      },
      { GATEWAY_ADMIN_KEY: ADMIN_KEY },
    ),
  );
}

describe('limits recover after Redis restarts with its data or stalls', function () {
  this.timeout(60000);
  const upstream = new MockUpstream();
  let hold = gate();
  let port: number;
  let dir: string;
  let redis: ChildProcess | undefined;
  let gw: TestGateway | undefined;

  before(async () => {
    await upstream.start();
    upstream.handler = (_r, res) => heldStream(res, hold.promise);
  });
  beforeEach(async () => {
    hold = gate();
    port = await freePort();
    dir = mkdtempSync(join(tmpdir(), 'gw-redis-recovery-'));
    redis = await startRedis(port, dir);
  });
  afterEach(async () => {
    hold.release();
    await gw?.stop();
    gw = undefined;
    await stopRedis(redis);
    rmSync(dir, { recursive: true, force: true });
  });
  after(async () => {
    await upstream.stop();
  });

  const chat = (key: string, model = 'mock/gpt-4o-mini', stream = false) =>
    postJson(
      `${gw!.url}/v1/chat/completions`,
      { model, stream, messages: [{ role: 'user', content: 'hi' }] },
      { authorization: `Bearer ${key}` },
    );

  it('concurrency 2: streams that end while Redis is away release their slots once it is back with its old counters', async () => {
    gw = await gateway(port, upstream, 1000);
    const { key, hash } = await makeAccountKey(gw);
    await adminCall(gw, 'PUT', `/v1/keys/${hash}/limits`, { rate_limits: { rpm: 1000, concurrency: 2 } });

    const streams = [await chat(key, 'up/slow', true), await chat(key, 'up/slow', true)];
    expect(streams.map((r) => r.status)).to.deep.equal([200, 200]);
    const third = await chat(key);
    expect(third.status).to.equal(429);
    expect(await code(third)).to.equal('concurrency_limit_exceeded');

    // Redis goes away, saving its data (both slots held), and the two streams end meanwhile.
    const exited = new Promise((r) => redis!.once('exit', r));
    await redisCommand(port, 'SHUTDOWN', 'SAVE');
    await exited;
    expect(existsSync(join(dir, 'dump.rdb'))).to.equal(true);
    await until('the gateway to notice', async () => (await ready(gw!)) === 'degraded');
    hold.release();
    for (const s of streams) expect(await s.text()).to.contain('[DONE]');
    const away = await chat(key);
    expect(away.status).to.equal(429);
    expect(await code(away)).to.equal('limits_unavailable');

    // Back with the old counters: the slots released while it was away are released now, within seconds.
    hold = gate();
    redis = await startRedis(port, dir);
    const back = Date.now();
    await until('the gateway to recover', async () => (await ready(gw!)) === 'ready', 8000);
    expect(await storeUp(gw)).to.equal('1');
    const again = [await chat(key, 'up/slow', true), await chat(key, 'up/slow', true)];
    expect(again.map((r) => r.status)).to.deep.equal([200, 200]);
    expect(Date.now() - back).to.be.below(8000);
    // The window came back with Redis (the two first streams still count against requests/min).
    expect(again.map((r) => r.headers.get('x-ratelimit-remaining-requests'))).to.deep.equal(['997', '996']);
    const over = await chat(key);
    expect(over.status).to.equal(429);
    expect(await code(over)).to.equal('concurrency_limit_exceeded');
    hold.release();
    for (const s of again) expect(await s.text()).to.contain('[DONE]');
  });

  it('a stall past timeout_ms shows in /ready and the metric, and the admission that timed out does not count once Redis wakes', async () => {
    gw = await gateway(port, upstream, 300);
    const { key, hash } = await makeAccountKey(gw);
    await adminCall(gw, 'PUT', `/v1/keys/${hash}/limits`, { rate_limits: { rpm: 1000, concurrency: 1 } });
    const first = await chat(key);
    expect(first.status).to.equal(200);
    expect(first.headers.get('x-ratelimit-remaining-requests')).to.equal('999');
    expect(await ready(gw)).to.equal('ready');
    expect(await storeUp(gw)).to.equal('1');

    redis!.kill('SIGSTOP');
    // The admission is sent, times out, and the fail mode answers; Redis will run it when it wakes.
    const stalled = await chat(key);
    expect(stalled.status).to.equal(429);
    expect(await code(stalled)).to.equal('limits_unavailable');
    expect(await ready(gw)).to.equal('degraded');
    expect(await storeUp(gw)).to.equal('0');
    // Meanwhile the fail mode answers without waiting for Redis again.
    const t0 = Date.now();
    const meanwhile = await chat(key);
    expect(meanwhile.status).to.equal(429);
    expect(Date.now() - t0).to.be.below(300);
    await new Promise((r) => setTimeout(r, 500));
    expect(await ready(gw)).to.equal('degraded');

    redis!.kill('SIGCONT');
    const woke = Date.now();
    await until('the gateway to recover', async () => (await ready(gw!)) === 'ready', 5000);
    expect(await storeUp(gw)).to.equal('1');
    // Nothing is running: the concurrency-1 key is admitted, and the timed-out admission left no count behind.
    const after = await chat(key, 'up/slow', true);
    expect(after.status).to.equal(200);
    expect(Date.now() - woke).to.be.below(5000);
    expect(after.headers.get('x-ratelimit-remaining-requests')).to.equal('998');
    const second = await chat(key);
    expect(second.status).to.equal(429);
    expect(await code(second)).to.equal('concurrency_limit_exceeded');
    hold.release();
    expect(await after.text()).to.contain('[DONE]');
  });
});
