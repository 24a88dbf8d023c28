import { expect } from 'chai';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * A newcomer's first hour (issue 49), scripted with the real CLI in child processes on the example gateway.yaml: the
 * port taken then freed, a config with typos, a chain in the wrong order, the README's quick start run twice. Each
 * ends in one clear message, and then a working gateway.
 */
const ROOT = process.cwd();
const TSX = require.resolve('tsx/cjs');
const run = promisify(execFile);

function env(extra: Record<string, string>): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env };
  delete e.GATEWAY_ADMIN_KEY;
  delete e.GATEWAY_CONFIG;
  Object.assign(e, extra);
  if (!('PORT' in extra)) e.PORT = '0';
  return e;
}

const cli = (args: string[], extra: Record<string, string> = {}) =>
  run(process.execPath, ['--require', TSX, join(ROOT, 'src/cli.ts'), ...args], { env: env(extra) }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );

interface Started {
  url?: string;
  code?: number | null;
  out: string;
  err: string;
  stop(): Promise<void>;
}

/** `gateway start`: resolves when it listens (url) or exits (code), whichever comes first. */
function start(config: string, extra: Record<string, string> = {}): Promise<Started> {
  const child = spawn(process.execPath, ['--require', TSX, join(ROOT, 'src/cli.ts'), 'start', '--config', config], {
    env: env(extra),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const s: Started = {
    out: '',
    err: '',
    stop: () =>
      new Promise<void>((r) => {
        if (child.exitCode !== null) return r();
        child.once('exit', () => r());
        child.kill('SIGTERM');
      }),
  };
  return new Promise((resolve) => {
    child.stderr.on('data', (d: Buffer) => (s.err += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      s.out += d.toString();
      const m = /"url":"(http:\/\/[^"]+)"/.exec(s.out);
      if (m && !s.url) {
        s.url = m[1];
        // The keys are printed just before the listening line; give stderr a moment to arrive.
        setTimeout(() => resolve(s), 200);
      }
    });
    child.on('exit', (code) => {
      s.code = code;
      resolve(s);
    });
  });
}

const KEY = /sk-gw-[0-9A-Za-z]{36}/g;

async function chat(url: string, key: string): Promise<number> {
  const r = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: 'mock/gpt-4o-mini', messages: [{ role: 'user', content: 'Hello!' }] }),
  });
  await r.arrayBuffer();
  return r.status;
}

describe("first hour without traps: a newcomer's first hour, scripted (issue 49)", function () {
  this.timeout(300_000);
  let dir: string;
  let config: string;
  const base = readFileSync(join(ROOT, 'gateway.yaml'), 'utf8');
  const write = (name: string, text: string) => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'gw-hour-'));
    config = write('gateway.yaml', base);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('the port taken: one message naming PORT, no key made; once freed, the start prints both keys and serves', async () => {
    const squatter = createServer();
    await new Promise<void>((r) => squatter.listen(0, '127.0.0.1', () => r()));
    const port = String((squatter.address() as AddressInfo).port);
    const taken = await start(config, { PORT: port });
    expect(taken.code).to.equal(1);
    expect(taken.err).to.include(`127.0.0.1:${port} is already in use`).and.include('PORT');
    expect(taken.err.match(KEY), 'no key printed by a start that failed').to.equal(null);
    expect(taken.err.trim().split('\n'), taken.err).to.have.length(1);
    await new Promise<void>((r) => squatter.close(() => r()));

    const freed = await start(config, { PORT: port });
    try {
      expect(freed.url, freed.err).to.equal(`http://127.0.0.1:${port}`);
      const keys = freed.err.match(KEY) ?? [];
      expect(keys, freed.err).to.have.length(2); // the admin key and the local account's
      expect(await chat(freed.url!, keys[1])).to.equal(200);
    } finally {
      await freed.stop();
    }
  });

  it('a top-level typo and a plugin typo: check and start both list both, nothing is made; fixed, it starts', async () => {
    const typo = write(
      'typo.yaml',
      base.replace('\nstore:', '\nstroe:').replace('protect_models: false', 'protect_model: false'),
    );
    const check = await cli(['check', '--config', typo]);
    expect(check.code).to.equal(1);
    expect(check.stderr).to.include('stroe').and.include("plugin 'auth'").and.include('protect_model');
    const started = await start(typo);
    expect(started.code).to.equal(1);
    expect(started.err).to.equal(check.stderr); // the same checks, the same words
    expect(started.err.match(KEY)).to.equal(null);

    // credit moved before fallback, which must come first (start refused it while check passed, in the issue).
    const moved = base.replace(/\n {2}- credit[^\n]*/, '').replace('  - params', '  - credit\n  - params');
    const wrongOrder = write('order.yaml', moved);
    const order = await cli(['check', '--config', wrongOrder]);
    expect(order.code).to.equal(1);
    expect(order.stderr).to.include("'fallback' must come before 'credit'");
    expect((await start(wrongOrder)).err).to.equal(order.stderr);

    // What only a plugin's setup refuses (the auth plugin: a weak admin key), check refuses too.
    const weak = await cli(['check', '--config', config], { GATEWAY_ADMIN_KEY: 'secret' });
    expect(weak.code).to.equal(1);
    expect(weak.stderr).to.include('The admin key (GATEWAY_ADMIN_KEY');

    const fine = await cli(['check', '--config', config]);
    expect(fine.code, fine.stderr).to.equal(0);
    const ok = await start(config);
    try {
      expect(ok.url, ok.err).to.be.a('string');
      expect(ok.err.match(KEY) ?? []).to.have.length(2);
    } finally {
      await ok.stop();
    }
  });

  it("the README's quick start twice: one clear message for the second 'team'; keys by name; limits readable", async () => {
    const quick = async () => [
      await cli(['accounts', 'create', '--name', 'team', '--credits', '50', '--config', config]),
      await cli(['keys', 'create', '--account', 'team', '--name', 'ci', '--config', config]),
      await cli(['accounts', 'credits', 'add', 'team', '25', '--config', config]),
    ];
    const first = await quick();
    expect(first.map((r) => r.code)).to.deep.equal([0, 0, 0]);
    const limits = await cli(['keys', 'limits', 'ci', '--rpm', '60', '--models', 'mock/*', '--config', config]);
    expect(limits.code, limits.stderr).to.equal(0);
    expect(limits.stdout)
      .to.match(/rpm=60/)
      .and.include('mock/*')
      .and.not.include('[object Object]');

    const second = await quick();
    expect(second[0].code).to.not.equal(0);
    expect(second[0].stderr.trim()).to.match(/^gateway: An account named 'team' already exists \(acct_[\w-]+\)/);
    expect(second[0].stderr.trim().split('\n')).to.have.length(1);
    expect(second[1].code).to.equal(0); // the README's next lines still work: 'team' is one account
    expect(second[2].code).to.equal(0);
    const accounts = JSON.parse((await cli(['accounts', 'list', '--json', '--config', config])).stdout) as unknown;
    expect([accounts].flat().filter((a) => (a as { name: string }).name === 'team')).to.have.length(1);

    // Two keys are named ci now: the name is refused with their hashes; the start of a hash is enough.
    const ambiguous = await cli(['keys', 'disable', 'ci', '--config', config]);
    expect(ambiguous.stderr).to.match(/several keys match 'ci' \([0-9a-f]{12}, [0-9a-f]{12}\)/);
    const hash = /\(([0-9a-f]{12}),/.exec(ambiguous.stderr)![1];
    const disabled = await cli(['keys', 'disable', hash.slice(0, 8), '--json', '--config', config]);
    expect(disabled.code, disabled.stderr).to.equal(0);
    expect(JSON.parse(disabled.stdout)).to.include({ disabled: true });

    const ok = await start(config);
    try {
      expect(ok.url, ok.err).to.be.a('string');
    } finally {
      await ok.stop();
    }
  });
});
