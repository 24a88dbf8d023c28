/**
 * `npm run bench`: the gateway's speed, measured in one run on this machine, side by side:
 *  - direct: the instant loopback upstream (bench/upstream.ts) itself;
 *  - floor: 40 lines of node:http + undici (bench/floor.ts), the least a JSON proxy does;
 *  - core: the gateway with the routing plugin only;
 *  - full: the gateway with ./gateway.yaml's chain (or --plugins), SQLite, a real key.
 * Each target runs alone under load while the others sit idle (closed loop): each is warmed up (`--warmup` seconds at
 * c=8), then `--rounds` rounds take the targets in turn, each making a run at c=1 and one at c=32; each figure
 * printed is the median of its rounds, each ratio the median of the rounds' own ratios; then 300 streamed requests
 * per target for the time to first token. CPU per request at c=32 is
 * the whole process's and its main thread's (the event loop), from /proc. Every process is
 * separate, on loopback. `--long` instead runs the full chain for 5 minutes at c=32 and
 * prints RSS and event-loop delay p99 over time and the SQLite DB+WAL bytes per 1,000 requests.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { median, runLoad, timeToFirstToken, type LoadResult } from './load';
import { cacheBench } from './cache';
import { hotPath } from './hot-path';
import { guardrailsScenario } from './guardrails';
import { longRun } from './long';
import { cpuMs, mainThreadCpuMs, rssMb, type Target } from './proc';
import { defaultPlugins, startGateway, startProcess } from './gateway-target';
import { startStreamTargets, streamCost } from './stream-cost';
import { bodyCost, startBodyTargets } from './body-cost';
import { workersBench } from './workers';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    plugins: { type: 'string' },
    long: { type: 'boolean', default: false },
    'long-seconds': { type: 'string', default: '300' },
  },
});
const seconds = Number(values.seconds);
/**
 * Seconds of load (c=8) before a target is measured. V8 goes on optimizing the chain's code for several seconds:
 * after 1 s of warm-up its compiler threads still took ~80 us of CPU a request at c=1 on this machine, ~40 after 10 s.
 */
const warmup = Number(values.warmup);
/** Rounds of c=1 and c=32 per target; the figures printed are their medians. */
const rounds = Math.max(1, Number(values.rounds));
const children: ChildProcess[] = [];
/**
 * How long a bench gateway's store worker may sit idle (store.idle_worker_ms): longer than a gateway waits for the
 * other three targets' runs of a round (two runs each), so that no round measures a worker that has just started
 * again (a cold one cost ~20% more CPU a request for its first tens of seconds), and short enough that the worker
 * has stopped, as in an idle gateway on the defaults, when the idle RSS is read.
 */
const WORKER_IDLE_MS = (3 * 2 * seconds + 15) * 1000;
/** Every process settled idle (the gateways' workers stopped) before the idle RSS is read. */
const IDLE_WAIT_S = WORKER_IDLE_MS / 1000 + 6;
const dirs: string[] = [];

async function start(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ url: string; pid: number }> {
  const { child, url } = await startProcess(args, env, children);
  return { url, pid: child.pid! };
}

async function startTarget(name: string, upUrl: string, plugins: unknown[]): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), `gw-bench-${name}-`));
  dirs.push(dir);
  const pluginNames = plugins.map((p) => (typeof p === 'string' ? p : Object.keys(p as object)[0]));
  const { child, url, db, headers } = await startGateway(dir, upUrl, plugins, children, {
    idle_worker_ms: WORKER_IDLE_MS,
  });
  return { name, url: `${url}/v1/chat/completions`, pid: child.pid!, headers, db, plugins: pluginNames };
}

const body = JSON.stringify({
  model: 'bench/model',
  messages: [{ role: 'user', content: 'Hello, how are you?' }],
  max_tokens: 64,
});
const streamBody = JSON.stringify({
  model: 'bench/model',
  stream: true,
  messages: [{ role: 'user', content: 'Hello' }],
});

interface Row {
  c1: LoadResult;
  c32: LoadResult;
  idleRss: number;
  maxRss: number;
  ttft: number;
  /** CPU the target used per request at c=32, us: steadier than req/s on a shared machine. */
  cpuUs: number;
  /** Of which its main thread (the event loop). */
  mainUs: number;
  /** Share of the c=32 run's wall time its main thread was on a CPU (1 = saturated). */
  mainBusy: number;
  /** CPU the upstream and the load generator used per request of its c=32 run, us. */
  aroundUs: number;
  /** Cores the whole machine's part of its c=32 run kept busy (target, upstream, load generator). */
  coresBusy: number;
}

/** One round of a target: c=1, then c=32 with its CPU a request. */
interface Round {
  c1: LoadResult;
  c32: LoadResult;
  cpuUs: number;
  mainUs: number;
  /** Share of the c=32 run's wall time its main thread was on a CPU (1 = saturated). */
  mainBusy: number;
  aroundUs: number;
  coresBusy: number;
}

const step = (t: Target, m: string) => process.stderr.write(`bench: ${t.name}: ${m}\n`);

async function round(t: Target, n: number, maxRss: { mb: number }): Promise<Round> {
  step(t, `round ${n}: concurrency 1`);
  const c1 = await runLoad(t.url, body, t.headers, 1, seconds);
  step(t, `round ${n}: concurrency 32`);
  const sampler = setInterval(() => (maxRss.mb = Math.max(maxRss.mb, rssMb(t.pid))), 100);
  const cpuBefore = cpuMs(t.pid);
  const mainBefore = mainThreadCpuMs(t.pid);
  // The direct target is the upstream: its CPU is counted once.
  const upBefore = t.pid === upstreamPid ? 0 : cpuMs(upstreamPid);
  const loadBefore = process.cpuUsage();
  const c32 = await runLoad(t.url, body, t.headers, 32, seconds);
  const loadUsage = process.cpuUsage(loadBefore);
  const cpuUsedMs = cpuMs(t.pid) - cpuBefore;
  const aroundMs =
    (t.pid === upstreamPid ? 0 : cpuMs(upstreamPid) - upBefore) + (loadUsage.user + loadUsage.system) / 1000;
  const cpuUs = (cpuUsedMs * 1000) / c32.requests;
  const mainMs = mainThreadCpuMs(t.pid) - mainBefore;
  const mainUs = (mainMs * 1000) / c32.requests;
  const mainBusy = mainMs / (c32.seconds * 1000);
  const aroundUs = (aroundMs * 1000) / c32.requests;
  const coresBusy = (cpuUsedMs + aroundMs) / (c32.seconds * 1000);
  clearInterval(sampler);
  if (c1.errors + c32.errors > 0) throw new Error(`${t.name}: ${c1.errors + c32.errors} requests failed`);
  return { c1, c32, cpuUs, mainUs, mainBusy, aroundUs, coresBusy };
}

/** What the goals compare, from one round: the targets measured minutes apart would compare two machine speeds. */
interface Paired {
  coreFloor: number;
  fullCore: number;
  /** full - core c=1 p99, ms */
  p99Gap: number;
}

/** The median of a figure of the rounds, with each round's in brackets: `0.52x (rounds 0.48x, 0.52x, 0.55x)`. */
function pairedFigure(paired: Paired[], pick: (p: Paired) => number, unit: string): string {
  const each = paired.map((p) => `${pick(p).toFixed(2)}${unit}`).join(', ');
  return `${median(paired.map(pick)).toFixed(2)}${unit} (rounds ${each})`;
}

/** Each figure of a run the median over the rounds, the counts summed. */
function medianLoad(rs: LoadResult[]): LoadResult {
  const sum = (f: (r: LoadResult) => number) => rs.reduce((a, r) => a + f(r), 0);
  return {
    requests: sum((r) => r.requests),
    errors: sum((r) => r.errors),
    seconds: sum((r) => r.seconds),
    rps: median(rs.map((r) => r.rps)),
    p50: median(rs.map((r) => r.p50)),
    p99: median(rs.map((r) => r.p99)),
  };
}

/**
 * Every target warmed up, then `rounds` rounds that take the targets in turn, so that the figures a ratio compares
 * come from runs seconds apart, not minutes: on this shared machine the speed of the same code drifted by half within
 * minutes (the core chain 2,899-5,856 req/s in 3 s runs), while a ratio of two targets measured side by side moved
 * less (full / core 0.44-0.54 over six such pairs). Each figure is the median of its rounds, each ratio the median of
 * the rounds' ratios. The gateways keep their store's worker between their rounds (WORKER_IDLE_MS).
 */
async function measureAll(targets: Target[], idle: number[]): Promise<{ rows: Record<string, Row>; paired: Paired[] }> {
  for (const t of targets) {
    step(t, 'warm-up');
    await runLoad(t.url, body, t.headers, 8, warmup);
  }
  const maxRss = targets.map((t) => ({ mb: rssMb(t.pid) }));
  const rs: Round[][] = targets.map(() => []);
  const paired: Paired[] = [];
  for (let n = 1; n <= rounds; n++) {
    const by: Record<string, Round> = {};
    for (const [i, t] of targets.entries()) rs[i].push((by[t.name] = await round(t, n, maxRss[i])));
    paired.push({
      coreFloor: by.core.c32.rps / by.floor.c32.rps,
      fullCore: by.full.c32.rps / by.core.c32.rps,
      p99Gap: by.full.c1.p99 - by.core.c1.p99,
    });
  }
  const rows: Record<string, Row> = {};
  for (const [i, t] of targets.entries()) {
    step(t, 'time to first token');
    rows[t.name] = {
      c1: medianLoad(rs[i].map((r) => r.c1)),
      c32: medianLoad(rs[i].map((r) => r.c32)),
      idleRss: idle[i],
      maxRss: maxRss[i].mb,
      ttft: await timeToFirstToken(t.url, streamBody, t.headers, 300),
      cpuUs: median(rs[i].map((r) => r.cpuUs)),
      mainUs: median(rs[i].map((r) => r.mainUs)),
      mainBusy: median(rs[i].map((r) => r.mainBusy)),
      aroundUs: median(rs[i].map((r) => r.aroundUs)),
      coresBusy: median(rs[i].map((r) => r.coresBusy)),
    };
  }
  return { rows, paired };
}

/** The loopback upstream's process: its CPU is part of every target's run. */
let upstreamPid = 0;

async function main(): Promise<void> {
  const up = await start([join(__dirname, 'upstream.js')]);
  upstreamPid = up.pid;
  const fullPlugins = values.plugins ? values.plugins.split(',') : defaultPlugins();
  const full = await startTarget('full', up.url, fullPlugins);
  if (values.long) {
    await new Promise((r) => setTimeout(r, 2000));
    process.stdout.write(`${(await longRun(full, body, Number(values['long-seconds']))).join('\n')}\n`);
    return;
  }
  const floor = await start([join(__dirname, 'floor.js'), up.url]);
  const core = await startTarget('core', up.url, ['routing']);
  const targets: Target[] = [
    { name: 'direct', url: `${up.url}/v1/chat/completions`, pid: up.pid, headers: {} },
    { name: 'floor', url: `${floor.url}/v1/chat/completions`, pid: floor.pid, headers: {} },
    core,
    full,
  ];
  // Idle = settled: V8 gives back the young generation it grew during startup once a GC
  // runs at a low allocation rate (the gateway runs one when it has been idle for a while).
  process.stderr.write(`bench: ${IDLE_WAIT_S}s for every process to settle idle\n`);
  await new Promise((r) => setTimeout(r, IDLE_WAIT_S * 1000));
  const idle = targets.map((t) => rssMb(t.pid));
  const { rows, paired } = await measureAll(targets, idle);

  const f = (n: number, d = 2) => n.toFixed(d);
  const ratio = (a: number, b: number) => `${f(a / b)}x`;
  const lines = [
    `full chain: ${full.plugins!.join(' -> ')}; core chain: routing   (${seconds}s per run after ${warmup}s of warm-up, the median of ${rounds} rounds taking the targets in turn, node ${process.version})`,
    '',
    '| target | c=1 p50 ms | c=1 p99 ms | c=32 req/s | c=32 p99 ms | CPU us/req (main thread) | idle / max RSS MB | TTFT ms | added TTFT ms |',
    '|---|---|---|---|---|---|---|---|---|',
    ...Object.entries(rows).map(
      ([k, r]) =>
        `| ${k} | ${f(r.c1.p50)} | ${f(r.c1.p99)} | ${f(r.c32.rps, 0)} | ${f(r.c32.p99)} | ${f(r.cpuUs, 0)} (${f(r.mainUs, 0)}) | ${f(r.idleRss, 0)} / ${f(r.maxRss, 0)} | ${f(r.ttft, 3)} | ${k === 'direct' ? '-' : f(r.ttft - rows.direct.ttft, 3)} |`,
    ),
    '',
    `core / floor req/s at c=32: ${pairedFigure(paired, (p) => p.coreFloor, 'x')} (goal >= 0.8x); CPU per request core / floor: ${ratio(rows.core.cpuUs, rows.floor.cpuUs)}`,
    `full / core req/s at c=32: ${pairedFigure(paired, (p) => p.fullCore, 'x')} (goal >= 0.8x)`,
    // A gateway's main thread near 100% busy at c=32 sets its req/s there: the ratio then follows its CPU a request.
    `main thread busy at c=32: ${['floor', 'core', 'full'].map((k) => `${k} ${f(rows[k].mainBusy * 100, 0)}%`).join(', ')}; ` +
      `its CPU a request core / floor ${ratio(rows.core.mainUs, rows.floor.mainUs)}, full / core ${ratio(rows.full.mainUs, rows.core.mainUs)} (0.8x req/s needs <= 1.25x)`,
    ...machineBudget(rows),
    `full - core c=1 p99: ${pairedFigure(paired, (p) => p.p99Gap, ' ms')} (goal <= 1)`,
    `added TTFT over direct: floor ${f(rows.floor.ttft - rows.direct.ttft, 3)} ms, core ${f(rows.core.ttft - rows.direct.ttft, 3)} ms, full ${f(rows.full.ttft - rows.direct.ttft, 3)} ms (goal core <= 0.5)`,
    `full chain idle RSS: ${f(rows.full.idleRss, 1)} MB (goal <= 65)`,
  ];
  if (full.plugins!.includes('metrics'))
    lines.push('', ...(await pluginCosts(full.url.replace('/v1/chat/completions', ''))));
  // The response cache's own runs (bench/cache.ts), on the same upstream, with the other targets idle.
  lines.push('', ...(await cacheBench(up.url)));
  for (const c of children) c.kill('SIGTERM');
  lines.push('', ...(await hotPath()));
  lines.push('', ...(await guardrailsScenario(seconds, rounds)));
  // What users pay for beyond a request (issue 44): streams per chunk and large bodies, in their own processes.
  lines.push(
    '',
    ...(await streamCost(await startStreamTargets(__dirname, fullPlugins, children, dirs), rounds, seconds)),
  );
  lines.push('', ...(await bodyCost(await startBodyTargets(__dirname, fullPlugins, children, dirs), rounds, 20)));
  // Every core (issue 44): 2 workers against 1, on PostgreSQL with the limits in Redis (the only store they run on).
  lines.push(
    '',
    ...(process.env.GATEWAY_TEST_POSTGRES_URL
      ? await workersBench({ rounds, seconds, warmup, keys: 8 })
      : ['workers: not measured (GATEWAY_TEST_POSTGRES_URL, and GATEWAY_TEST_REDIS_URL, name the servers to use)']),
  );
  process.stdout.write(`${lines.join('\n')}\n`);
}

main()
  .catch((e: unknown) => {
    process.stderr.write(`bench failed: ${e instanceof Error ? e.stack : String(e)}\n`);
    process.exitCode = 1;
  })
  .finally(() => {
    for (const c of children) c.kill('SIGTERM');
    // The databases (hundreds of MB after --long) go once the gateways have let go of them.
    setTimeout(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })), 1000);
  });

/**
 * What the machine leaves the full chain at 0.8x the core's req/s at c=32: its cores' time per request at that rate,
 * less what the upstream and the load generator (on the same cores) spend on each. The full chain's CPU a request,
 * all its threads, must fit in it even if every core were kept busy; the runs show how many were.
 */
function machineBudget(rows: Record<string, Row>): string[] {
  const cores = availableParallelism();
  const rate = 0.8 * rows.core.c32.rps;
  const budget = (cores * 1e6) / rate - rows.full.aroundUs;
  const busy = ['floor', 'core', 'full'].map((k) => `${k} ${rows[k].coresBusy.toFixed(2)}`).join(', ');
  return [
    `machine at c=32: cores busy ${busy} of ${cores}; the upstream and the load generator ${rows.full.aroundUs.toFixed(0)} us a request`,
    `  at 0.8x the core's req/s (${rate.toFixed(0)}), ${cores} cores leave the full chain ${budget.toFixed(0)} us of CPU a request (all its threads; every core busy); it used ${rows.full.cpuUs.toFixed(0)}`,
  ];
}

/** Mean own time per request of each plugin, from the gateway's /metrics (routing's includes the upstream wait). */
async function pluginCosts(url: string): Promise<string[]> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const read = (suffix: string) =>
    new Map(
      [
        ...text.matchAll(new RegExp(`^gateway_plugin_duration_seconds_${suffix}\\{plugin="([^"]+)"\\} (\\S+)$`, 'gm')),
      ].map((m) => [m[1], Number(m[2])]),
    );
  const sums = read('sum');
  const counts = read('count');
  return [
    'full chain, plugin own time per request (mean over the whole run, from /metrics):',
    ...[...sums.entries()].map(
      ([name, sum]) =>
        `  ${name.padEnd(9)} ${((sum / (counts.get(name) || 1)) * 1e6).toFixed(1)} us${name === 'routing' ? ' (includes waiting for the upstream)' : ''}`,
    ),
  ];
}
