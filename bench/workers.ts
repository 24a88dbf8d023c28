/**
 * `npm run bench:workers`: what a second worker (server.workers: 2) buys. The full default chain on the PostgreSQL
 * store (a fresh schema per target) with the limits counted in Redis, started once with 1 worker and once with 2; both
 * stay up and take turns within each round at c=32, so that the ratio compares runs seconds apart. Each run reads the
 * CPU of the target's whole process tree (the primary and its workers) and each process's main thread, and what the
 * rest of the machine spent meanwhile (the upstream, the load generator, PostgreSQL, Redis, every core) so that a
 * ratio short of the goal says where the cores went. Env: GATEWAY_TEST_POSTGRES_URL, GATEWAY_TEST_REDIS_URL (else
 * the local defaults). `npm run bench` prints the same rows when GATEWAY_TEST_POSTGRES_URL is set. With
 * `--pg-log PATH` (the server's log, e.g. /var/log/postgresql/postgresql-15-main.log) it also counts the round trips
 * and statements a request, which load does not change.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Client } from 'pg';
import { median, runLoad, type LoadResult } from './load';
import { countStatements, postgresSessionPids, sampleSessions, type SessionStates } from './pg-sessions';
import { cpuMs, mainThreadCpuMs } from './proc';
import {
  adminPost,
  BENCH_ADMIN_KEY,
  defaultPlugins,
  gatewayNodeArgs,
  startProcess,
  writeGatewayConfig,
} from './gateway-target';

const PG_URL = process.env.GATEWAY_TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_URL = process.env.GATEWAY_TEST_REDIS_URL || 'redis://127.0.0.1:6379';
const root = resolve(__dirname, '../..');

const body = JSON.stringify({
  model: 'bench/model',
  messages: [{ role: 'user', content: 'Hello, how are you?' }],
  max_tokens: 64,
});

interface WorkersTarget {
  name: string;
  workers: number;
  child: ChildProcess;
  url: string;
  /** One set of headers per key the load spreads over (each key on its own account). */
  keys: Array<Record<string, string>>;
  schema: string;
}

/** The pids of the processes whose /proc/PID/stat line `match` accepts. */
function pidsWhere(match: (stat: string) => boolean): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (match(readFileSync(`/proc/${d}/stat`, 'utf8'))) out.push(Number(d));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}
const parentOf = (stat: string) => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
const commOf = (stat: string) => stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
const childrenOf = (pid: number) => pidsWhere((s) => parentOf(s) === pid);

/** The machine's CPU time so far, ms over all cores: busy and total (from /proc/stat). */
function machineMs(): { busy: number; total: number } {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].split(/\s+/).slice(1).map(Number);
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0) * 10;
  return { busy: total - (f[3] + f[4]) * 10, total };
}

/** CPU ms so far of each process of a list, summed; a process gone meanwhile counts 0. */
const sumCpu = (pids: number[]) =>
  pids.reduce((a, p) => {
    try {
      return a + cpuMs(p);
    } catch {
      return a;
    }
  }, 0);

/** `logged`: the server logs every statement of the sessions (what --pg-log counts). */
async function freshSchema(logged: boolean): Promise<{ url: string; schema: string }> {
  const schema = `gw_bench_${randomBytes(6).toString('hex')}`;
  const c = new Client({ connectionString: PG_URL });
  await c.connect();
  await c.query(`CREATE SCHEMA ${schema}`);
  await c.end();
  const u = new URL(PG_URL);
  u.searchParams.set('options', `-c search_path=${schema}${logged ? ' -c log_min_duration_statement=0' : ''}`);
  return { url: u.toString(), schema };
}

async function dropSchemas(schemas: string[]): Promise<void> {
  const c = new Client({ connectionString: PG_URL });
  await c.connect();
  for (const s of schemas) await c.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
  await c.end();
}

/** The default chain with the limits plugin counting in Redis (under a fresh prefix), as workers must. */
function chainOnRedis(): unknown[] {
  const prefix = `gw-bench-${randomBytes(4).toString('hex')}:`;
  return defaultPlugins().map((p) => {
    if (typeof p !== 'object' || p === null || !('limits' in p)) return p;
    const cfg = (p as { limits: Record<string, unknown> }).limits;
    return { limits: { ...cfg, store: 'redis', redis: { url: REDIS_URL, prefix } } };
  });
}

/** Resolves once `n` lines "gateway listening" (one per worker) have been written on the child's stdout. */
function listening(child: ChildProcess, n: number): Promise<void> {
  return new Promise((res, rej) => {
    let seen = 0;
    let tail = '';
    child.stdout!.on('data', (d: Buffer) => {
      const text = tail + d.toString();
      seen += (text.match(/"msg":"gateway listening"/g) ?? []).length;
      tail = text.slice(-40);
      if (seen >= n) res();
    });
    child.on('exit', (code) => rej(new Error(`gateway exited (${code})`)));
  });
}

async function startTarget(
  name: string,
  workers: number,
  keys: number,
  upUrl: string,
  track: ChildProcess[],
  dirs: string[],
  logged: boolean,
): Promise<WorkersTarget> {
  const dir = mkdtempSync(join(tmpdir(), `gw-bench-${name}-`));
  dirs.push(dir);
  const { url: storeUrl, schema } = await freshSchema(logged);
  const { cfgPath } = writeGatewayConfig(dir, upUrl, chainOnRedis(), { driver: 'postgres', url: storeUrl });
  const args = [
    ...gatewayNodeArgs(),
    join(root, 'dist/src/cli.js'),
    ...['start', '--config', cfgPath, '--workers', String(workers)],
  ];
  const env = { ...process.env, GATEWAY_ADMIN_KEY: BENCH_ADMIN_KEY };
  const started = startProcess(args, env, track);
  const child = track[track.length - 1]; // startProcess tracks its child at once: count its workers from the start
  const all = listening(child, workers);
  const { url } = await started;
  await all;
  const headers: Array<Record<string, string>> = [];
  for (let i = 0; i < keys; i++) {
    const account = await adminPost(url, '/v1/accounts', { name: `bench-${i}`, credits: 9_000_000 });
    const key = await adminPost(url, '/v1/keys', { name: 'bench', account_id: (account.data as { id: string }).id });
    headers.push({ authorization: `Bearer ${key.key as string}` });
  }
  return { name, workers, child, url: `${url}/v1/chat/completions`, keys: headers, schema };
}

/**
 * c=32 spread over the target's keys (32 / keys connections each), as one result: the counts and req/s summed, p99
 * the worst key's. On PostgreSQL every request of a key updates its key's and its account's rows in each of its two
 * transactions, so requests of one key wait for each other's commits: one key measures that row, several the gateway.
 */
async function load(t: WorkersTarget, seconds: number): Promise<LoadResult> {
  const n = t.keys.length;
  const rs = await Promise.all(
    t.keys.map((h, i) => runLoad(t.url, body, h, Math.floor(32 / n) + (i < 32 % n ? 1 : 0), seconds)),
  );
  const sum = (f: (r: LoadResult) => number) => rs.reduce((a, r) => a + f(r), 0);
  return {
    requests: sum((r) => r.requests),
    errors: sum((r) => r.errors),
    seconds: Math.max(...rs.map((r) => r.seconds)),
    rps: sum((r) => r.rps),
    p50: median(rs.map((r) => r.p50)),
    p99: Math.max(...rs.map((r) => r.p99)),
  };
}

/** One run at c=32 of a target, with where the machine's CPU went meanwhile. */
interface Run {
  rps: number;
  p99: number;
  /** The target's process tree's CPU a request, us. */
  cpuUs: number;
  /** Each process's main thread busy share of the run's wall time: the primary first, then each worker. */
  mainBusy: number[];
  /** Cores kept busy by: the target's tree, the upstream, the load generator, PostgreSQL, Redis, the whole machine. */
  cores: { target: number; upstream: number; load: number; postgres: number; redis: number; machine: number };
  /** CPU a request of the PostgreSQL server processes serving this target's sessions alone, us. */
  pgOwnUs: number;
  /** What those sessions were doing, on average over the run. */
  sessions: SessionStates;
  /** With --pg-log: messages (round trips) and statements those sessions sent a request. */
  sent: { messages: number; statements: number } | null;
}

async function run(t: WorkersTarget, seconds: number, upstreamPid: number, pgLog?: string): Promise<Run> {
  const primary = t.child.pid!;
  const tree = [primary, ...childrenOf(primary)];
  const pg = pidsWhere((s) => commOf(s) === 'postgres');
  const redis = pidsWhere((s) => commOf(s) === 'redis-server');
  const own = await postgresSessionPids(PG_URL, tree);
  const before = { tree: sumCpu(tree), up: cpuMs(upstreamPid), pg: sumCpu(pg), own: sumCpu(own), redis: sumCpu(redis) };
  const mains = tree.map((p) => mainThreadCpuMs(p));
  const loadCpu = process.cpuUsage();
  const machine = machineMs();
  const running = load(t, seconds);
  const sessions = sampleSessions(PG_URL, own, running);
  const sent = pgLog ? countStatements(pgLog, own, running) : null;
  const r = await running;
  const wallMs = r.seconds * 1000;
  const loadUsage = process.cpuUsage(loadCpu);
  const m = machineMs();
  const treeMs = sumCpu(tree) - before.tree;
  if (r.errors > 0) throw new Error(`${t.name}: ${r.errors} of ${r.requests} requests failed`);
  return {
    rps: r.rps,
    p99: r.p99,
    cpuUs: (treeMs * 1000) / r.requests,
    pgOwnUs: ((sumCpu(own) - before.own) * 1000) / r.requests,
    sessions: await sessions,
    sent: sent && (await sent).messages > 0 ? perRequest(await sent, r.requests) : null,
    mainBusy: tree.map((p, i) => (mainThreadCpuMs(p) - mains[i]) / wallMs),
    cores: {
      target: treeMs / wallMs,
      upstream: (cpuMs(upstreamPid) - before.up) / wallMs,
      load: (loadUsage.user + loadUsage.system) / 1000 / wallMs,
      postgres: (sumCpu(pg) - before.pg) / wallMs,
      redis: (sumCpu(redis) - before.redis) / wallMs,
      machine: ((m.busy - machine.busy) / (m.total - machine.total)) * availableParallelism(),
    },
  };
}

const perRequest = (s: { messages: number; statements: number }, n: number) => ({
  messages: s.messages / n,
  statements: s.statements / n,
});

/** The rows the bench prints: per round 2w / 1w req/s, then each target's medians and where the cores went. */
export function workersRows(runs: Record<string, Run[]>, o: WorkersOptions): string[] {
  const f = (n: number, d = 2) => n.toFixed(d);
  const one = runs['1 worker'];
  const two = runs['2 workers'];
  const ratios = two.map((r, i) => r.rps / one[i].rps);
  const med = (rs: Run[], pick: (r: Run) => number) => median(rs.map(pick));
  const lines = [
    `workers (full default chain, PostgreSQL store, limits in Redis; c=32 over ${o.keys} key(s) of as many accounts, ` +
      `${o.seconds}s runs after ${o.warmup}s of warm-up, ` +
      `the median of ${ratios.length} rounds taking the targets in turn; ${availableParallelism()} cores shared with ` +
      'the upstream, the load generator, PostgreSQL and Redis):',
    '',
    '| target | c=32 req/s | c=32 p99 ms | CPU us/req (all processes) | its PostgreSQL sessions: CPU us/req | its sessions: waiting for a row / for the WAL / working / waiting for it (mean) | main threads busy (primary; workers) | cores busy: target / upstream / load gen / postgres / redis / machine |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const [k, rs] of Object.entries(runs)) {
    const m = (pick: (r: Run) => number, d = 0) => f(med(rs, pick), d);
    const busy = rs[0].mainBusy.map((_, i) => `${m((r) => (r.mainBusy[i] ?? 0) * 100)}%`);
    const cores = (['target', 'upstream', 'load', 'postgres', 'redis', 'machine'] as const).map((c) =>
      m((r) => r.cores[c], 2),
    );
    const sessions = (['lock', 'wal', 'working', 'client'] as const).map((s) => m((r) => r.sessions[s], 1));
    const cells = [
      k,
      m((r) => r.rps),
      m((r) => r.p99, 2),
      m((r) => r.cpuUs),
      m((r) => r.pgOwnUs),
      sessions.join(' / '),
      `${busy[0]}; ${busy.slice(1).join(', ') || '(serves itself)'}`,
      cores.join(' / '),
    ];
    lines.push(`| ${cells.join(' | ')} |`);
  }
  for (const [k, rs] of Object.entries(runs))
    if (rs.every((r) => r.sent))
      lines.push(
        '',
        `${k}: its sessions sent ${f(median(rs.map((r) => r.sent!.messages)))} messages (round trips) and ` +
          `${f(median(rs.map((r) => r.sent!.statements)))} statements a request (from the server's log)`,
      );
  lines.push(
    '',
    `2 workers / 1 worker req/s at c=32: ${f(median(ratios))}x (rounds ${ratios.map((x) => `${f(x)}x`).join(', ')}) (goal >= 1.2x)`,
  );
  return lines;
}

export interface WorkersOptions {
  rounds: number;
  seconds: number;
  warmup: number;
  /** Keys (each on its own account) the 32 connections spread over. */
  keys: number;
  /**
   * The PostgreSQL server's log, readable here: its sessions log every statement, and the rows add the round trips
   * and statements a request (counted, so the figures hold under load; the logging itself costs CPU).
   */
  pgLog?: string;
}

/** Both targets warmed up, then `rounds` rounds taking them in turn; returns the rows. */
export async function workersBench(o: WorkersOptions): Promise<string[]> {
  const children: ChildProcess[] = [];
  const dirs: string[] = [];
  const targets: WorkersTarget[] = [];
  try {
    const up = await startProcess([join(__dirname, 'upstream.js')], process.env, children);
    for (const [name, n] of [
      ['1 worker', 1],
      ['2 workers', 2],
    ] as const)
      targets.push(await startTarget(name, n, o.keys, up.url, children, dirs, o.pgLog !== undefined));
    for (const t of targets) {
      process.stderr.write(`bench: workers ${t.name}: warm-up\n`);
      await load(t, o.warmup);
    }
    const runs: Record<string, Run[]> = {};
    for (let n = 1; n <= o.rounds; n++)
      for (const t of targets) {
        process.stderr.write(`bench: workers ${t.name}: round ${n}\n`);
        (runs[t.name] ??= []).push(await run(t, o.seconds, up.child.pid!, o.pgLog));
      }
    return workersRows(runs, o);
  } finally {
    await Promise.all(children.map((c) => stopped(c)));
    dirs.forEach((d) => rmSync(d, { recursive: true, force: true }));
    await dropSchemas(targets.map((t) => t.schema)).catch(() => undefined);
  }
}

/** SIGTERM, resolved at its exit (a gateway lets go of its PostgreSQL schema before the bench drops it). */
function stopped(c: ChildProcess): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null) return Promise.resolve();
  return new Promise((res) => {
    c.once('exit', () => res());
    c.kill('SIGTERM');
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '5' },
      seconds: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '5' },
      keys: { type: 'string', default: '8' },
      'pg-log': { type: 'string' },
    },
  });
  const [rounds, seconds, warmup, keys] = [values.rounds, values.seconds, values.warmup, values.keys].map(Number);
  const lines = await workersBench({ rounds, seconds, warmup, keys, pgLog: values['pg-log'] });
  process.stdout.write(`${lines.join('\n')}\n`);
}

if (require.main === module)
  main().catch((e: unknown) => {
    process.stderr.write(`bench failed: ${e instanceof Error ? e.stack : String(e)}\n`);
    process.exitCode = 1;
  });
