import { expect } from 'chai';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import {
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const ROOT = process.cwd();
const cli = (args: string[], env: Record<string, string> = {}) =>
  run(process.execPath, ['--require', 'tsx/cjs', 'src/cli.ts', ...args], { env: { ...process.env, ...env } }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );

describe('first hour: config errors and the CLI', function () {
  this.timeout(120_000);
  const dir = mkdtempSync(join(tmpdir(), 'gw-first-'));
  const base = readFileSync(join(ROOT, 'gateway.yaml'), 'utf8');
  const write = (name: string, text: string) => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };

  it('a typo inside a plugin section names the file and the nearest key, without a false "requires" error', async () => {
    const file = write('typo.yaml', base.replace('protect_models: false', 'protect_model: false'));
    const r = await cli(['check', '--config', file]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.include(`Invalid configuration ${file}`);
    expect(r.stderr).to.include(
      "/plugins/2/auth/protect_model: plugin 'auth': unknown key; did you mean 'protect_models'?",
    );
    expect(r.stderr).to.not.include('requires');
  });

  it('a YAML error keeps its line, column and excerpt; an unset variable is one message', async () => {
    const yaml = await cli(['check', '--config', write('bad.yaml', base.replace('  port: 8080', '  port: [8080'))]);
    expect(yaml.code).to.equal(1);
    expect(yaml.stderr)
      .to.match(/line \d+, column \d+/)
      .and.include('^');
    const env = await cli([
      'check',
      '--config',
      write('env.yaml', base.replace('${LOG_LEVEL:-info}', '${GW_TEST_UNSET_LEVEL}')),
    ]);
    expect(env.code).to.equal(1);
    const lines = env.stderr.trim().split('\n').slice(1);
    expect(lines).to.deep.equal([
      '  /server/log_level: environment variable GW_TEST_UNSET_LEVEL is not set and has no default',
    ]);
  });

  it('accounts credits add and keys create --account take a name; the key is printed once with a warning; help lists every command', async () => {
    const cfg = write(
      'cli.yaml',
      `store: { driver: sqlite, path: ${join(dir, 'cli.db')} }\nproviders: [{ name: mock, type: mock }]\nmodels: [{ id: m, deployments: [{ provider: mock, model: x }] }]\nplugins: [auth, routing]\n`,
    );
    expect((await cli(['accounts', 'create', '--name', 'team', '--credits', '5', '--config', cfg])).code).to.equal(0);
    const topped = await cli(['accounts', 'credits', 'add', 'team', '2.5', '--json', '--config', cfg]);
    expect(JSON.parse(topped.stdout)).to.include({ name: 'team', credits: 7.5 });
    const less = await cli(['accounts', 'credits', 'add', 'team', '-1', '--json', '--config', cfg]);
    expect(JSON.parse(less.stdout)).to.include({ credits: 6.5 });
    expect((await cli(['accounts', 'credits', 'add', 'nobody', '1', '--config', cfg])).stderr).to.include(
      "no account with the id or name 'nobody'",
    );
    const key = await cli(['keys', 'create', '--account', 'team', '--name', 'ci', '--config', cfg]);
    expect(key.code).to.equal(0);
    expect(key.stderr).to.include('shown once');
    expect(key.stdout).to.match(/^\s+sk-gw-[0-9A-Za-z]{36}\n/);
    const help = await cli(['help']);
    for (const c of [
      'gateway start',
      'gateway check',
      'gateway accounts credits add',
      'gateway keys create --account',
      'gateway keys scan',
    ])
      expect(help.stdout).to.include(c);
    expect(Math.max(...help.stdout.split('\n').map((l) => l.length))).to.be.at.most(110);
  });
});

/** Newest mtime under a directory (dist/ is what a build writes). */
function newest(path: string): number {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  return Math.max(st.mtimeMs, ...readdirSync(path).map((e) => newest(join(path, e))));
}

/** `npm start` in `dir` (its own process group), until the gateway says where it listens. */
async function npmStart(
  dir: string,
): Promise<{ child: ChildProcess; url: string; out: () => string; err: () => string; stop: () => Promise<void> }> {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0' };
  delete env.GATEWAY_ADMIN_KEY;
  delete env.GATEWAY_CONFIG;
  const child = spawn('npm', ['start'], { cwd: dir, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`npm start did not listen in time:\n${out}\n${err}`)), 400_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /"url":"(http:\/\/[^"]+)"/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on('exit', (code) => (clearTimeout(timer), reject(new Error(`npm start exited (${code}):\n${out}\n${err}`))));
  });
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  return {
    child,
    url,
    out: () => out,
    err: () => err,
    stop: async () => {
      process.kill(-(child.pid as number), 'SIGTERM');
      await exited;
    },
  };
}

describe("first hour: the README's two commands in a fresh clone", function () {
  this.timeout(900_000);
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gw-clone-'));
    const head = (await run('git', ['rev-parse', 'HEAD'], { cwd: ROOT })).stdout.trim();
    await run('git', ['clone', '-q', ROOT, dir]);
    await run('git', ['checkout', '-q', head], { cwd: dir });
    // `npm ci` is skipped: the installed packages are linked in; every script after it runs as written.
    symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(dir, 'node_modules'));
  });
  after(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('npm start builds, prints both keys to the terminal and not into the log, serves the README snippet; a second start does not rebuild', async () => {
    const first = await npmStart(dir);
    try {
      const err = first.err();
      const admin = /admin key \(shown once, store it now\): (sk-gw-[0-9A-Za-z]{36})/.exec(err)?.[1];
      const local = /first API key \(shown once\): (sk-gw-[0-9A-Za-z]{36})/.exec(err)?.[1];
      expect(admin, err).to.be.a('string');
      expect(local, err).to.be.a('string');
      expect(first.out())
        .to.not.include(admin as string)
        .and.not.include(local as string);
      expect(first.out()).to.include('build: sources changed');
      // Every stdout line after npm's own header is a JSON log line.
      const logLines = first
        .out()
        .split('\n')
        .filter((l) => l.startsWith('{'));
      expect(logLines.length).to.be.greaterThan(0);

      // The README's SDK snippet, as written, saved as hello.mjs.
      const readme = readFileSync(join(dir, 'README.md'), 'utf8');
      const snippet = /save this as `hello\.mjs`[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)?.[1];
      expect(snippet, 'README snippet').to.be.a('string');
      writeFileSync(join(dir, 'hello.mjs'), snippet as string);
      const hello = await run(process.execPath, ['hello.mjs'], {
        cwd: dir,
        env: { ...process.env, GATEWAY_KEY: local as string, GATEWAY_URL: `${first.url}/v1` },
      });
      expect(hello.stdout).to.include('Mock answer');

      const console = await fetch(`${first.url}/console`);
      expect(console.status).to.equal(200);
      expect(await console.text()).to.include('/console/app.js');
    } finally {
      await first.stop();
    }

    const built = newest(join(dir, 'dist'));
    const started = Date.now();
    const second = await npmStart(dir);
    try {
      expect(second.out()).to.not.include('build: sources changed').and.not.include('> tsc');
      expect(second.err()).to.not.include('shown once'); // keys are printed on the first start only
      expect(newest(join(dir, 'dist'))).to.equal(built);
      expect(Date.now() - started).to.be.lessThan(60_000);
    } finally {
      await second.stop();
    }
  });

  it('npm test runs its prerequisites, both type checks and mocha (here on one test file, so that it does not run itself)', async () => {
    for (const f of (await run('git', ['ls-files', 'test/**/*.test.ts'], { cwd: dir })).stdout.trim().split('\n')) {
      if (f !== 'test/core/mock-provider.test.ts') rmSync(join(dir, f));
    }
    const r = await run('npm', ['test'], { cwd: dir, env: { ...process.env }, maxBuffer: 10 * 1024 * 1024 });
    expect(r.stdout).to.include('node scripts/test-prereqs.js').and.include('tsc -p console/tsconfig.json');
    expect(r.stdout).to.match(/\d+ passing/);
    expect(r.stdout).to.not.match(/\d+ failing/);
  });
});
