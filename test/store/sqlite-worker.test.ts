import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { SqliteDb } from '../../src/store/engine/sqlite-db';

function sourcesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourcesUnder(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('SQLite store in a worker thread', function () {
  this.timeout(60000);

  it('disk work (commits, checkpoints of a 20+ MB WAL, its truncation) never stalls the event loop 5 ms beyond what an idle thread sees', async () => {
    // In a process of its own: only the store's work shares the event loop that is watched.
    const out = execFileSync(
      process.execPath,
      ['--require', 'tsx/cjs', join(__dirname, '..', 'fixtures', 'loop-stall.ts')],
      {
        encoding: 'utf8',
        timeout: 50000,
      },
    );
    const m = JSON.parse(out.trim().split('\n').pop() as string) as {
      maxOwn: number;
      max: number;
      p99: number;
      idle: { max: number; p99: number };
      walPeak: number;
      walEnd: number;
      rows: number;
    };
    expect(m.walPeak, 'the WAL grew large').to.be.greaterThan(20e6);
    expect(m.walEnd, 'and was checkpointed and truncated while the loop was watched').to.equal(0);
    expect(m.rows).to.equal(120);
    const ms = (ns: number) => ns / 1e6;
    // The longest stall less what was not the thread's doing: its own garbage collections and its waits for a CPU
    // (time blocked in a system call, as disk I/O would be, still counts). On this 2-core virtual machine the plain
    // maximum failed CI runs at the commit before this measure as after (12-23 ms against 11-15): the thread's own
    // scavenges (9-13 ms, the JSON of 400 KB bodies) and run-queue waits. A checkpoint or commit run on this thread
    // would stall it ~100 ms; a 30 ms busy loop in the fixture fails this.
    expect(ms(m.maxOwn), `longest stall (an idle thread's: ${ms(m.idle.max).toFixed(1)} ms)`).to.be.below(
      5 + ms(m.idle.max),
    );
    // (The monitor's own max and p99 also carry this thread's collections and JSON work on a busy CPU: reported.)
    if (process.env.GATEWAY_TEST_VERBOSE)
      console.log(
        `    max ${ms(m.max).toFixed(1)} ms (${ms(m.maxOwn).toFixed(1)} of its own), ` +
          `p99 ${ms(m.p99).toFixed(1)} ms, idle thread ${ms(m.idle.p99).toFixed(1)} ms`,
      );
  });

  it('loads its worker from compiled JavaScript too (as under dist/), and keeps what it acknowledged across a reopen', async () => {
    const root = join(__dirname, '..', '..');
    // Inside the repository (git-ignored .tmp/), so that the compiled files find node_modules.
    mkdirSync(join(root, '.tmp'), { recursive: true });
    const out = mkdtempSync(join(root, '.tmp', 'dist-'));
    buildSync({
      entryPoints: sourcesUnder(join(root, 'src')),
      outdir: join(out, 'src'),
      outbase: join(root, 'src'),
      format: 'cjs',
      platform: 'node',
      logLevel: 'error',
    });
    const path = join(out, 'gateway.db');
    const script = `
      const { openStore } = require(${JSON.stringify(join(out, 'src', 'store', 'index.js'))});
      (async () => {
        const s = await openStore({ driver: 'sqlite', path: ${JSON.stringify(path)} });
        await s.setMeta('k', process.argv[1]);
        const v = await s.getMeta('k');
        await s.close();
        process.stdout.write(JSON.stringify({ v, pg: Object.keys(require.cache).some((k) => k.includes('/node_modules/pg/')) }));
      })();`;
    const run = (arg: string) =>
      JSON.parse(execFileSync(process.execPath, ['-e', script, arg], { cwd: root, encoding: 'utf8' })) as {
        v: string;
        pg: boolean;
      };
    expect(run('one')).to.deep.equal({ v: 'one', pg: false });
    expect(run('two')).to.deep.equal({ v: 'two', pg: false });
    rmSync(out, { recursive: true, force: true });
  });

  it('under tsx, a SQLite configuration never loads pg', () => {
    const root = join(__dirname, '..', '..');
    const path = join(mkdtempSync(join(tmpdir(), 'gw-nopg-')), 'gateway.db');
    const script = `
      const { openStore } = require('./src/store/index.ts');
      (async () => {
        const s = await openStore({ driver: 'sqlite', path: ${JSON.stringify(path)} });
        await s.ping();
        await s.close();
        process.stdout.write(String(Object.keys(require.cache).some((k) => k.includes('/node_modules/pg/'))));
      })();`;
    expect(
      execFileSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], { cwd: root, encoding: 'utf8' }),
    ).to.equal('false');
  });

  it('a write made while a driven transaction is open does not hold back its next statement (one message in flight)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gw-inflight-'));
    const db = new SqliteDb(join(dir, 'store.db'));
    let inTime = false;
    try {
      await db.exec('CREATE TABLE t (v TEXT NOT NULL)');
      let outside: Promise<unknown> = Promise.resolve();
      const done = db.tx(async (t) => {
        await t.run('INSERT INTO t (v) VALUES (?)', ['inside']);
        // This write reaches the worker alone while the transaction is open: it waits for the transaction's end,
        // which the main thread may only send once the worker has answered the write's message.
        outside = db.write('INSERT INTO t (v) VALUES (?)', ['outside']);
        await new Promise((r) => setTimeout(r, 20));
        await t.run('INSERT INTO t (v) VALUES (?)', ['inside too']);
      });
      inTime = await Promise.race([
        done.then(() => outside).then(() => true),
        new Promise<boolean>((r) => setTimeout(() => r(false), 5000)),
      ]);
      expect(inTime, 'both answered').to.equal(true);
      await done;
      const rows = await db.all<{ v: string }>('SELECT v FROM t ORDER BY rowid');
      expect(rows.map((r) => r.v)).to.deep.equal(['inside', 'inside too', 'outside']);
    } finally {
      if (inTime) await db.close(); // else it waits for the stuck transaction
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs its threads nicer than the event loop (Linux), so a message that wakes the writer does not take its CPU', async function () {
    if (process.platform !== 'linux') this.skip();
    /** The nice value of each of this process's threads, by thread id. */
    const nices = () =>
      new Map(
        readdirSync('/proc/self/task').map((t) => {
          const fields = readFileSync(`/proc/self/task/${t}/stat`, 'utf8').split(') ')[1].split(' ');
          return [t, Number(fields[16])] as const;
        }),
      );
    const own = nices().get(String(process.pid))!;
    const before = nices();
    const dir = mkdtempSync(join(tmpdir(), 'gw-nice-'));
    const db = new SqliteDb(join(dir, 'nice.db'));
    try {
      await db.run('CREATE TABLE t (x INTEGER)');
      const added = [...nices()].filter(([t]) => !before.has(t));
      expect(added.map(([, n]) => n)).to.include(Math.min(19, own + 5));
      expect(nices().get(String(process.pid)), 'the event loop keeps its own').to.equal(own);
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
