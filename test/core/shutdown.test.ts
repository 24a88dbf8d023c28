import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestGateway, testConfig, postJson, sseData } from '../helpers/gateway';

const slowModel = (delayMs: number) => ({
  id: 'mock/slow',
  owned_by: 'mock',
  deployments: [{ provider: 'mock', model: 'slow', options: { chunk_size: 1, chunk_delay_ms: delayMs } }],
});

describe('graceful shutdown', () => {
  it('lets a stream that finishes within the grace period finish', async () => {
    const gw = await startTestGateway(
      testConfig({
        models: [slowModel(20)],
        server: { host: '127.0.0.1', port: 0, log_level: 'silent', shutdown_grace_ms: 5000 },
      }),
    );
    const res = await postJson(`${gw.url}/v1/chat/completions`, {
      model: 'mock/slow',
      stream: true,
      messages: [{ role: 'user', content: 'a b c d e' }],
    });
    const body = res.text();
    await new Promise((r) => setTimeout(r, 60));
    const stopped = gw.stop();
    const frames = sseData(await body);
    expect(frames[frames.length - 1]).to.equal('[DONE]');
    await stopped;
  });

  it('twelve streams at once: no listener-leak warning, and each finishes within the grace period', async () => {
    const gw = await startTestGateway(
      testConfig({
        models: [slowModel(20)],
        server: { host: '127.0.0.1', port: 0, log_level: 'silent', shutdown_grace_ms: 5000 },
      }),
    );
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    try {
      const bodies = await Promise.all(
        Array.from({ length: 12 }, async () => {
          const res = await postJson(`${gw.url}/v1/chat/completions`, {
            model: 'mock/slow',
            stream: true,
            messages: [{ role: 'user', content: 'a b c d e' }],
          });
          return res.text();
        }),
      );
      await gw.stop();
      for (const b of bodies) expect(sseData(b).at(-1)).to.equal('[DONE]');
      await new Promise((r) => setImmediate(r)); // a warning is emitted on the next tick
      expect(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning'))).to.deep.equal([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('ends streams still running at the deadline with one error event', async () => {
    const gw = await startTestGateway(
      testConfig({
        models: [slowModel(200)],
        server: { host: '127.0.0.1', port: 0, log_level: 'silent', shutdown_grace_ms: 300 },
      }),
    );
    const res = await postJson(`${gw.url}/v1/chat/completions`, {
      model: 'mock/slow',
      stream: true,
      messages: [{ role: 'user', content: 'one two three four five six seven eight' }],
    });
    const body = res.text();
    await new Promise((r) => setTimeout(r, 100));
    const t0 = Date.now();
    await gw.stop();
    expect(Date.now() - t0).to.be.within(250, 2000);
    const frames = sseData(await body);
    expect(frames).to.not.include('[DONE]');
    expect(JSON.parse(frames[frames.length - 1])).to.deep.equal({
      error: {
        message: 'The gateway is shutting down; retry the request',
        type: 'server_error',
        param: '',
        code: 'shutting_down',
      },
    });
  });

  it('SIGTERM: the process stops accepting, finishes, and exits 0', async function () {
    this.timeout(30000);
    const dir = mkdtempSync(join(tmpdir(), 'gw-sig-'));
    const cfg = join(dir, 'g.yaml');
    writeFileSync(
      cfg,
      `server: { port: 0, log_level: info, shutdown_grace_ms: 3000 }\nstore: { driver: sqlite, path: ${join(dir, 'db.sqlite')} }\nproviders: [{ name: mock, type: mock }]\nmodels:\n  - { id: m, deployments: [{ provider: mock, model: x, options: { chunk_size: 1, chunk_delay_ms: 30 } }] }\nplugins: [routing]\n`,
    );
    const child = spawn(process.execPath, ['--require', 'tsx/cjs', 'src/cli.ts', 'start', '--config', cfg], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /"url":"(http:\/\/[^"]+)"/.exec(out);
        if (m) resolve(m[1]);
      });
      child.on('exit', () => reject(new Error(`exited early: ${out}`)));
    });
    const res = await postJson(`${url}/v1/chat/completions`, {
      model: 'm',
      stream: true,
      messages: [{ role: 'user', content: 'a b c d' }],
    });
    const body = res.text();
    await new Promise((r) => setTimeout(r, 50));
    const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    child.kill('SIGTERM');
    expect(sseData(await body).pop()).to.equal('[DONE]');
    expect(await exit).to.equal(0);
    expect(out).to.match(/"msg":"stopped"/);
  });
});
