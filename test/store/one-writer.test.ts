import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_KEY, makeAccountKey } from '../helpers/accounts';
import { MOCK_MODEL } from '../helpers/gateway';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process';

/** Run the CLI (`node src/cli.ts ...args`) to its end, killed after `ms`: its exit code and output. */
function runCli(args: string[], ms = 20000): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--require', 'tsx/cjs', 'src/cli.ts', ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, GATEWAY_ADMIN_KEY: ADMIN_KEY },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

describe('one gateway process per SQLite file', function () {
  this.timeout(90000);
  let dir: string;
  const procs: GatewayProcess[] = [];

  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'gw-one-writer-'))));
  afterEach(async () => {
    for (const p of procs.splice(0)) await p.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  const config = (store: Record<string, unknown>) => ({
    server: { host: '127.0.0.1', port: 0, log_level: 'info' },
    store,
    providers: [{ name: 'mock', type: 'mock' }],
    models: [MOCK_MODEL],
    plugins: ['auth', 'credit', 'routing'],
  });
  const writeConfig = (name: string, cfg: Record<string, unknown>) => {
    const file = join(dir, name);
    writeFileSync(file, JSON.stringify(cfg));
    return file;
  };

  it('a second process on the file exits non-zero naming it and PostgreSQL; CLI commands still run; the next start after a stop or a crash succeeds', async () => {
    const db = join(dir, 'gateway.db');
    const cfg = config({ driver: 'sqlite', path: db });
    const first = await startGatewayProcess(cfg, { GATEWAY_ADMIN_KEY: ADMIN_KEY });
    procs.push(first);
    const { accountId } = await makeAccountKey(first, { credits: 10 });

    const file = writeConfig('second.yaml', cfg);
    const t0 = Date.now();
    const second = await runCli(['start', '--config', file]);
    expect(second.code, second.out).to.not.equal(0);
    expect(second.code, second.out).to.not.equal(null); // it exited by itself, not by the kill
    expect(second.out).to.not.match(/gateway listening/);
    expect(second.out).to.include(db);
    expect(second.out).to.include('another gateway process');
    expect(second.out).to.include('store.driver: postgres');
    expect(Date.now() - t0, 'refused at once').to.be.below(15000);

    // The first is untouched.
    expect((await fetch(`${first.url}/health`)).status).to.equal(200);

    // CLI commands keep no holds: they run beside the gateway (reads and an offline-safe write).
    const stats = await runCli(['db', 'stats', '--config', file]);
    expect(stats.code, stats.out).to.equal(0);
    const list = await runCli(['accounts', 'list', '--json', '--config', file]);
    expect(list.code, list.out).to.equal(0);
    expect(list.out).to.include(accountId);

    // Stopped: the next one starts.
    expect(await first.stop('SIGTERM')).to.equal(0);
    const next = await startGatewayProcess(cfg, { GATEWAY_ADMIN_KEY: ADMIN_KEY });
    procs.push(next);
    expect((await fetch(`${next.url}/health`)).status).to.equal(200);

    // Killed: the kernel drops its lock, and the next one starts too.
    await next.stop('SIGKILL');
    const afterCrash = await startGatewayProcess(cfg, { GATEWAY_ADMIN_KEY: ADMIN_KEY });
    procs.push(afterCrash);
    expect((await fetch(`${afterCrash.url}/health`)).status).to.equal(200);
    const again = await runCli(['start', '--config', file]);
    expect(again.code, again.out).to.not.equal(0);
    expect(again.out).to.include(db);
  });

  it('the memory store is unaffected: two processes start', async () => {
    const cfg = config({ driver: 'memory' });
    procs.push(await startGatewayProcess(cfg, { GATEWAY_ADMIN_KEY: ADMIN_KEY }));
    procs.push(await startGatewayProcess(cfg, { GATEWAY_ADMIN_KEY: ADMIN_KEY }));
    for (const p of procs) expect((await fetch(`${p.url}/health`)).status).to.equal(200);
  });
});
