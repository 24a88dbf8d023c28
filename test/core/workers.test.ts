import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { POSTGRES_URL, freshPostgresUrl } from '../helpers/postgres';
import { ADMIN_KEY, makeAccountKey } from '../helpers/accounts';
import { postJson } from '../helpers/gateway';

/** The pids whose parent is `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

async function until(what: string, ok: () => boolean, ms = 10000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function startCli(config: Record<string, unknown>, args: string[]): { child: ChildProcess; out: () => string } {
  const dir = mkdtempSync(join(tmpdir(), 'gw-workers-'));
  const file = join(dir, 'gateway.yaml');
  writeFileSync(file, JSON.stringify(config));
  const child = spawn(process.execPath, ['--require', 'tsx/cjs', 'src/cli.ts', 'start', '--config', file, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, GATEWAY_ADMIN_KEY: ADMIN_KEY },
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  return { child, out: () => out };
}

const exited = (c: ChildProcess) =>
  c.exitCode !== null ? Promise.resolve(c.exitCode) : new Promise<number | null>((r) => c.once('exit', r));

const base = (store: Record<string, unknown>) => ({
  server: { host: '127.0.0.1', port: 0, log_level: 'info' },
  store,
  providers: [{ name: 'mock', type: 'mock' }],
  models: [
    { id: 'mock/m', pricing: { prompt: 0, completion: 0 }, deployments: [{ provider: 'mock', model: 'mock-small' }] },
  ],
  plugins: ['auth', 'routing'],
});

describe('gateway start --workers N (issue 44: every core)', function () {
  this.timeout(60000);

  it('refuses several workers on SQLite, naming PostgreSQL, before anything starts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-workers-sqlite-'));
    const { child, out } = startCli(base({ driver: 'sqlite', path: join(dir, 'g.db') }), ['--workers', '2']);
    expect(await exited(child)).to.equal(1);
    expect(out()).to.match(/server\.workers: 2 needs the PostgreSQL store/);
    const bad = startCli(base({ driver: 'memory' }), ['--workers', 'two']);
    expect(await exited(bad.child)).to.equal(2);
  });

  (POSTGRES_URL ? it : it.skip)(
    'N processes answer on one port; a dead one is replaced; SIGTERM stops them all',
    async () => {
      const url = await freshPostgresUrl();
      const { child, out } = startCli(base({ driver: 'postgres', url, pool_size: 4 }), ['--workers', '2']);
      try {
        await until(
          'the workers',
          () => /gateway workers listening/.test(out()) && childrenOf(child.pid!).length === 2,
          30000,
        );
        await until('both workers listening', () => (out().match(/"gateway listening"/g) ?? []).length >= 2, 20000);
        const port = /"url":"http:\/\/127\.0\.0\.1:(\d+)"/.exec(out())?.[1];
        expect(port).to.match(/^\d+$/);
        const gw = { url: `http://127.0.0.1:${port}` };
        const { key } = await makeAccountKey(gw);
        const ask = () =>
          postJson(
            `${gw.url}/v1/chat/completions`,
            { model: 'mock/m', messages: [{ role: 'user', content: 'hi' }] },
            {
              authorization: `Bearer ${key}`,
              connection: 'close',
            },
          ).then((r) => r.status);
        expect(await Promise.all(Array.from({ length: 20 }, ask))).to.deep.equal(Array(20).fill(200));
        // Both processes answered: their access log lines say which worker wrote them.
        const chatLines = () =>
          out()
            .split('\n')
            .filter((l) => l.includes('/v1/chat/completions')).length;
        await until('the access log', () => chatLines() >= 20);
        const ids = new Set(
          out()
            .split('\n')
            .filter((l) => l.includes('/v1/chat/completions'))
            .map((l) => (JSON.parse(l) as { worker: number }).worker),
        );
        expect([...ids].sort()).to.deep.equal([1, 2]);
        // One bootstrap, however many processes: the first worker starts alone.
        expect((out().match(/bootstrap/gi) ?? []).length).to.be.at.most(2);
        const [victim] = childrenOf(child.pid!);
        process.kill(victim, 'SIGKILL');
        await until('a replacement', () => {
          const now = childrenOf(child.pid!);
          return now.length === 2 && !now.includes(victim);
        });
        expect(await Promise.all(Array.from({ length: 10 }, ask))).to.deep.equal(Array(10).fill(200));
        const workers = childrenOf(child.pid!);
        child.kill('SIGTERM');
        expect(await exited(child)).to.equal(0);
        expect(workers.filter((p) => childrenOf(child.pid!).includes(p) || existsPid(p))).to.deep.equal([]);
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
      }
    },
  );
});

function existsPid(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
