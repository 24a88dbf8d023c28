import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { POSTGRES_URL, freshPostgresUrl } from '../helpers/postgres';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../helpers/accounts';
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

const REDIS_URL = process.env.GATEWAY_TEST_REDIS_URL || undefined;

/** The port of the first "gateway listening" line, once `n` workers have written theirs. */
async function workersPort(child: ChildProcess, out: () => string, n: number): Promise<string> {
  await until('the workers', () => childrenOf(child.pid!).length === n, 30000);
  await until('every worker listening', () => (out().match(/"gateway listening"/g) ?? []).length >= n, 20000);
  const port = /"url":"http:\/\/127\.0\.0\.1:(\d+)"/.exec(out())?.[1];
  expect(port).to.match(/^\d+$/);
  return port!;
}

/** The access-log lines of chat requests: which worker answered, with what status. */
const chatAnswers = (out: string) =>
  out
    .split('\n')
    .filter((l) => l.includes('/v1/chat/completions'))
    .map((l) => JSON.parse(l) as { worker: number; status: number });

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
    '--workers 2 with the limits counted in each process warns, as server.workers does',
    async () => {
      const config = {
        ...base({ driver: 'postgres', url: await freshPostgresUrl() }),
        plugins: ['auth', 'limits', 'routing'],
      };
      const dir = mkdtempSync(join(tmpdir(), 'gw-workers-warn-'));
      const file = join(dir, 'gateway.yaml');
      writeFileSync(file, JSON.stringify(config));
      const check = (args: string[]) =>
        new Promise<string>((res) => {
          const c = spawn(process.execPath, ['--require', 'tsx/cjs', 'src/cli.ts', 'check', '--config', file, ...args]);
          let out = '';
          c.stderr.on('data', (d: Buffer) => (out += d.toString()));
          c.on('exit', (code) => res(`${code}: ${out}`));
        });
      const warning = /server\.workers: 2 with the limits plugin counting in each process/;
      expect(await check(['--workers', '2']))
        .to.match(/^0: /)
        .and.match(warning);
      expect(await check([])).to.not.match(/counting in each process/);
    },
  );

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

  (POSTGRES_URL && REDIS_URL ? it : it.skip)(
    'limits in Redis hold exactly across the workers of one port: rpm 10, 25 requests, 10 admitted',
    async () => {
      const config = {
        ...base({ driver: 'postgres', url: await freshPostgresUrl(), pool_size: 4 }),
        plugins: [
          'auth',
          {
            limits: { store: 'redis', redis: { url: REDIS_URL, prefix: `gw-test-${randomBytes(6).toString('hex')}:` } },
          },
          'routing',
        ],
      };
      const { child, out } = startCli(config, ['--workers', '2']);
      try {
        const gw = { url: `http://127.0.0.1:${await workersPort(child, out, 2)}` };
        const { key, hash } = await makeAccountKey(gw);
        const put = await adminCall(gw, 'PUT', `/v1/keys/${hash}/limits`, { rate_limits: { rpm: 10 } });
        expect(put.status).to.equal(200);
        // A new connection each: node's cluster hands connections to the workers in turn.
        const ask = () =>
          postJson(
            `${gw.url}/v1/chat/completions`,
            { model: 'mock/m', messages: [{ role: 'user', content: 'hi' }] },
            { authorization: `Bearer ${key}`, connection: 'close' },
          ).then((r) => r.status);
        // Six one after another: each worker admits some (each alone would admit ten) ...
        const first: number[] = [];
        for (let i = 0; i < 6; i++) first.push(await ask());
        expect(first).to.deep.equal(Array(6).fill(200));
        // ... then 19 at once: only the four left of the key's ten a minute, whichever worker takes them.
        const rest = await Promise.all(Array.from({ length: 19 }, ask));
        const count = (xs: number[], s: number) => xs.filter((x) => x === s).length;
        expect([count(rest, 200), count(rest, 429)]).to.deep.equal([4, 15]);
        await until('the access log', () => chatAnswers(out()).length >= 25);
        const answers = chatAnswers(out());
        const admittedBy = new Set(answers.filter((a) => a.status === 200).map((a) => a.worker));
        expect([...admittedBy].sort()).to.deep.equal([1, 2]);
        expect(answers.filter((a) => a.status === 200)).to.have.length(10);
      } finally {
        child.kill('SIGTERM');
        if ((await Promise.race([exited(child), new Promise((r) => setTimeout(r, 10000, 'late'))])) === 'late')
          child.kill('SIGKILL');
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
