/**
 * The response cache's bench (`npm run bench` prints it last; alone: `node dist/bench/cache.js`): a hit's CPU per
 * request and latency against a miss's, on the same gateway (auth, limits, credit, storage, cache, routing on SQLite),
 * and what the plugin costs a model it does not cache (the same chain without the plugin, and with it caching another
 * model only: the request is a bypass). With `models: []` the plugin has no step on the chain at all.
 * A hit sends the same body every time; a miss a body with a new message each time (an upstream call and a stored
 * entry each). Closed loop over undici, c=1 for latency and c=16 for CPU a request, from /proc.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { startGateway, startProcess, type BenchGateway } from './gateway-target';
import { median, percentile } from './load';
import { cpuMs, mainThreadCpuMs } from './proc';

const BASE = ['auth', { limits: { key: { rpm: 0, tpm: 0, concurrency: 64 } } }, 'credit', 'storage'];
const CACHE = { models: ['bench/model'] };

interface Figures {
  p50: number;
  p99: number;
  rps: number;
  cpuUs: number;
  mainUs: number;
  /** What X-Gateway-Cache said, counted. */
  seen: Record<string, number>;
}

let unique = 0;
const body = (fresh: boolean) =>
  JSON.stringify({
    model: 'bench/model',
    temperature: 0,
    max_tokens: 64,
    messages: [
      { role: 'user', content: fresh ? `Hello, how are you? ${process.pid}-${unique++}` : 'Hello, how are you?' },
    ],
  });

/** `concurrency` loops of requests for `seconds`; latencies (ms) and the cache header seen. */
async function load(g: BenchGateway, fresh: boolean, concurrency: number, seconds: number) {
  const pool = new Pool(g.url, { connections: concurrency, pipelining: 1 });
  const latencies: number[] = [];
  const seen: Record<string, number> = {};
  const deadline = performance.now() + seconds * 1000;
  const started = performance.now();
  const loop = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      const r = await pool.request({
        path: '/v1/chat/completions',
        method: 'POST',
        headers: { 'content-type': 'application/json', ...g.headers },
        body: body(fresh),
      });
      await r.body.text();
      if (r.statusCode !== 200) throw new Error(`bench cache: status ${r.statusCode}`);
      const h = String(r.headers['x-gateway-cache'] ?? 'none');
      seen[h] = (seen[h] ?? 0) + 1;
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  const elapsed = (performance.now() - started) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  return { latencies, seen, rps: latencies.length / elapsed };
}

async function measure(g: BenchGateway, fresh: boolean, seconds: number): Promise<Figures> {
  const c1 = await load(g, fresh, 1, seconds);
  const pid = g.child.pid!;
  const cpu0 = cpuMs(pid);
  const main0 = mainThreadCpuMs(pid);
  const c16 = await load(g, fresh, 16, seconds);
  const n = c16.latencies.length;
  return {
    p50: percentile(c1.latencies, 50),
    p99: percentile(c1.latencies, 99),
    rps: c16.rps,
    cpuUs: ((cpuMs(pid) - cpu0) * 1000) / n,
    mainUs: ((mainThreadCpuMs(pid) - main0) * 1000) / n,
    seen: { ...c1.seen, ...Object.fromEntries(Object.entries(c16.seen).map(([k, v]) => [k, v + (c1.seen[k] ?? 0)])) },
  };
}

/** The bench's lines; the upstream at `upUrl` is the main bench's (bench/upstream.ts). */
export async function cacheBench(
  upUrl: string,
  opts: { seconds?: number; rounds?: number; warmup?: number } = {},
): Promise<string[]> {
  const seconds = opts.seconds ?? 4;
  const rounds = opts.rounds ?? 3;
  const children: ChildProcess[] = [];
  const dirs: string[] = [];
  const start = (name: string, plugins: unknown[]) => {
    const dir = mkdtempSync(join(tmpdir(), `gw-bench-cache-${name}-`));
    dirs.push(dir);
    return startGateway(dir, upUrl, [...plugins, 'routing'], children);
  };
  try {
    const without = await start('without', BASE);
    const off = await start('off', [...BASE, { cache: { models: ['other/*'] } }]);
    const on = await start('on', [...BASE, { cache: CACHE }]);
    const runs: Record<string, Figures[]> = { without: [], off: [], hit: [], miss: [] };
    for (const [g, fresh] of [
      [without, true],
      [off, true],
      [on, false],
      [on, true],
    ] as const)
      await load(g, fresh, 8, opts.warmup ?? 5); // warm-up: V8 goes on optimizing the chain for seconds
    for (let r = 0; r < rounds; r++) {
      runs.without.push(await measure(without, true, seconds));
      runs.off.push(await measure(off, true, seconds));
      runs.hit.push(await measure(on, false, seconds));
      runs.miss.push(await measure(on, true, seconds));
    }
    const f = (n: number, d = 2) => n.toFixed(d);
    const row = (name: string, what: string, xs: Figures[]) => {
      const m = (pick: (x: Figures) => number) => median(xs.map(pick));
      const seen = Object.entries(xs[0].seen)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ');
      return `| ${name} | ${what} | ${f(m((x) => x.p50))} | ${f(m((x) => x.p99))} | ${f(
        m((x) => x.rps),
        0,
      )} | ${f(
        m((x) => x.cpuUs),
        0,
      )} (${f(
        m((x) => x.mainUs),
        0,
      )}) | ${seen} |`;
    };
    const cpu = (k: string) => median(runs[k].map((x) => x.cpuUs));
    return [
      `response cache (${seconds}s per run, the median of ${rounds} rounds, c=1 latency, c=16 req/s and CPU; chain auth -> limits -> credit -> storage [-> cache] -> routing, SQLite):`,
      '',
      '| run | what | c=1 p50 ms | c=1 p99 ms | c=16 req/s | CPU us/req (main thread) | X-Gateway-Cache (first round) |',
      '|---|---|---|---|---|---|---|',
      row('without', 'no cache plugin, a new message each request', runs.without),
      row('bypass', 'cache plugin, this model not cached', runs.off),
      row('miss', 'cache on, a new message each request', runs.miss),
      row('hit', 'cache on, the same request', runs.hit),
      '',
      `hit / miss CPU a request: ${f(cpu('hit') / cpu('miss'))}x; bypass / without: ${f(cpu('off') / cpu('without'))}x`,
    ];
  } finally {
    for (const c of children) c.kill('SIGTERM');
    setTimeout(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })), 1000);
  }
}

if (require.main === module) {
  const children: ChildProcess[] = [];
  startProcess([join(__dirname, 'upstream.js')], process.env, children)
    .then(({ url }) => {
      const { values } = parseArgs({
        options: { seconds: { type: 'string' }, rounds: { type: 'string' }, warmup: { type: 'string' } },
      });
      const n = (v: string | undefined) => (v === undefined ? undefined : Number(v));
      return cacheBench(url, { seconds: n(values.seconds), rounds: n(values.rounds), warmup: n(values.warmup) });
    })
    .then((lines) => process.stdout.write(`${lines.join('\n')}\n`))
    .catch((e: unknown) => {
      process.stderr.write(`bench cache failed: ${e instanceof Error ? e.stack : String(e)}\n`);
      process.exitCode = 1;
    })
    .finally(() => children.forEach((c) => c.kill('SIGTERM')));
}
