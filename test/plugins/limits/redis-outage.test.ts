import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, connect, type AddressInfo } from 'node:net';
import { startTestGateway, testConfig, postJson, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../../helpers/accounts';

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** This test's own redis-server (never the shared one): started, stopped and started again on one port. */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  for (let i = 0; i < 100; i++) {
    const up = await new Promise<boolean>((r) => {
      const c = connect(port, '127.0.0.1', () => (c.end(), r(true)));
      c.on('error', () => r(false));
    });
    if (up) return child;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error('redis-server did not start');
}

async function stopRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGKILL');
  await exited;
}

async function until(what: string, check: () => Promise<boolean>, ms = 15000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('limits when Redis goes away and comes back', function () {
  this.timeout(60000);
  let port: number;
  let redis: ChildProcess;
  const gws: Record<'open' | 'closed', TestGateway> = {} as Record<'open' | 'closed', TestGateway>;
  const keys: Record<string, string> = {};

  before(async () => {
    port = await freePort();
    redis = await startRedis(port);
    for (const mode of ['open', 'closed'] as const) {
      gws[mode] = await startTestGateway(
        testConfig(
          {
            plugins: [
              'metrics',
              'auth',
              {
                limits: {
                  store: 'redis',
                  fail_mode: mode,
                  redis: { url: `redis://127.0.0.1:${port}`, prefix: `${mode}:` },
                },
              },
              'routing',
            ],
          },
          { GATEWAY_ADMIN_KEY: ADMIN_KEY },
        ),
      );
      const { key, hash } = await makeAccountKey(gws[mode]);
      await adminCall(gws[mode], 'PUT', `/v1/keys/${hash}/limits`, { rate_limits: { rpm: 1000 } });
      keys[mode] = key;
    }
  });
  after(async () => {
    for (const gw of Object.values(gws)) await gw.stop();
    await stopRedis(redis);
  });

  const burst = (mode: 'open' | 'closed', n: number) =>
    Promise.all(
      Array.from({ length: n }, () =>
        postJson(
          `${gws[mode].url}/v1/chat/completions`,
          { model: 'mock/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
          { authorization: `Bearer ${keys[mode]}` },
        ),
      ),
    );
  const ready = async (mode: 'open' | 'closed') =>
    (await (await fetch(`${gws[mode].url}/ready`)).json()) as {
      status: string;
      checks: Array<{ name: string; status: string; detail: string }>;
    };
  const storeUp = async (mode: 'open' | 'closed') =>
    /^gateway_limits_store_up (\d)/m.exec(await (await fetch(`${gws[mode].url}/metrics`)).text())?.[1];

  it('counts in Redis, holds the chosen mode while it is down (no 5xx), says so in /ready and a metric, and recovers by itself', async () => {
    for (const mode of ['open', 'closed'] as const) {
      const rs = await burst(mode, 5);
      expect(rs.map((r) => r.status)).to.deep.equal([200, 200, 200, 200, 200]);
      expect(rs[0].headers.get('x-ratelimit-limit-requests')).to.equal('1000');
      expect((await ready(mode)).status).to.equal('ready');
      expect(await storeUp(mode)).to.equal('1');
    }

    await stopRedis(redis);
    for (const mode of ['open', 'closed'] as const) {
      await until(`${mode} to notice`, async () => (await ready(mode)).status === 'degraded');
      const r = await ready(mode);
      expect(r.checks.find((c) => c.name === 'limits')?.detail).to.contain(`failing ${mode}`);
      expect(await storeUp(mode)).to.equal('0');
    }
    const open = await burst('open', 10);
    expect(open.map((r) => r.status)).to.deep.equal(Array(10).fill(200));
    // Open: this replica's own counters hold the limits meanwhile.
    expect(
      open.map((r) => Number(r.headers.get('x-ratelimit-remaining-requests'))).sort((a, b) => a - b),
    ).to.deep.equal([990, 991, 992, 993, 994, 995, 996, 997, 998, 999]);
    const closed = await burst('closed', 10);
    expect(closed.map((r) => r.status)).to.deep.equal(Array(10).fill(429));
    for (const r of closed) {
      expect(Number(r.headers.get('retry-after'))).to.be.at.least(1);
      expect(((await r.json()) as { error: { code: string } }).error.code).to.equal('limits_unavailable');
    }

    redis = await startRedis(port);
    for (const mode of ['open', 'closed'] as const) {
      await until(`${mode} to recover`, async () => (await ready(mode)).status === 'ready');
      expect(await storeUp(mode)).to.equal('1');
      const rs = await burst(mode, 3);
      expect(rs.map((r) => r.status)).to.deep.equal([200, 200, 200]);
      // Counted again (a fresh server: the window restarts).
      expect(
        rs.map((r) => Number(r.headers.get('x-ratelimit-remaining-requests'))).sort((a, b) => a - b),
      ).to.deep.equal([997, 998, 999]);
    }
  });
});
