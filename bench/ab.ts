/**
 * `npm run bench:ab -- --a <checkout>`: two builds of the gateway paired on this machine, the way the sittings since
 * the eleventh measured each change. One loopback upstream; a gateway started from each checkout's dist/ (each built
 * with `npm run build` or tsc); both warmed up, then `--rounds` rounds, each running A and B at `--concurrency` for
 * `--seconds`, in alternating order. Each ratio printed is the median of the rounds' own B / A ratios: this shared
 * machine drifts by half within minutes, so only runs seconds apart compare. Paired this way, a change of about 4%
 * or more stands out of the noise; a smaller one needs a micro-benchmark.
 * Options: --a DIR (required), --b DIR (default: this checkout), --chain full|core|p1,p2,... (default full: this
 * checkout's gateway.yaml plugins), --stream (streamed requests), --rounds 10, --seconds 3, --concurrency 32.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { median, runLoad } from './load';
import { cpuMs, mainThreadCpuMs } from './proc';
import { defaultPlugins, startProcess } from './gateway-target';
import type * as GatewayTarget from './gateway-target';

const { values } = parseArgs({
  options: {
    a: { type: 'string' },
    b: { type: 'string', default: resolve(__dirname, '../..') },
    chain: { type: 'string', default: 'full' },
    stream: { type: 'boolean', default: false },
    rounds: { type: 'string', default: '10' },
    seconds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '32' },
  },
});

interface Run {
  rps: number;
  p99: number;
  /** CPU of the whole process a request, us (worker threads included), and of its main thread. */
  cpuUs: number;
  mainUs: number;
}

interface Build {
  name: 'A' | 'B';
  url: string;
  pid: number;
  headers: Record<string, string>;
  runs: Run[];
}

const children: ChildProcess[] = [];
const dirs: string[] = [];

function pluginsOf(chain: string): unknown[] {
  if (chain === 'full') return defaultPlugins();
  if (chain === 'core') return ['routing'];
  return chain.split(',');
}

/** A gateway started from `root`'s own dist/ (its own bench helper: the two builds need not agree on more). */
async function startBuild(name: 'A' | 'B', root: string, upUrl: string): Promise<Build> {
  const target = require(join(resolve(root), 'dist/bench/gateway-target.js')) as typeof GatewayTarget;
  const dir = mkdtempSync(join(tmpdir(), `gw-ab-${name}-`));
  dirs.push(dir);
  // The worker stays up between rounds: a worker started again costs more for its first seconds.
  const gw = await target.startGateway(dir, upUrl, pluginsOf(values.chain!), children, { idle_worker_ms: 3_600_000 });
  return { name, url: `${gw.url}/v1/chat/completions`, pid: gw.child.pid!, headers: gw.headers, runs: [] };
}

async function measure(b: Build, body: string, concurrency: number, seconds: number): Promise<Run> {
  const cpu0 = cpuMs(b.pid);
  const main0 = mainThreadCpuMs(b.pid);
  const r = await runLoad(b.url, body, b.headers, concurrency, seconds);
  if (r.errors > 0) throw new Error(`${b.name}: ${r.errors} requests failed`);
  return {
    rps: r.rps,
    p99: r.p99,
    cpuUs: ((cpuMs(b.pid) - cpu0) * 1000) / r.requests,
    mainUs: ((mainThreadCpuMs(b.pid) - main0) * 1000) / r.requests,
  };
}

async function main(): Promise<void> {
  if (!values.a) throw new Error('--a <checkout with a built dist/> is required');
  const rounds = Math.max(1, Number(values.rounds));
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  const body = JSON.stringify(
    values.stream
      ? { model: 'bench/model', stream: true, messages: [{ role: 'user', content: 'Hello' }] }
      : { model: 'bench/model', messages: [{ role: 'user', content: 'Hello, how are you?' }], max_tokens: 64 },
  );
  const { url: upUrl } = await startProcess([join(__dirname, 'upstream.js')], process.env, children);
  const builds = [await startBuild('A', values.a, upUrl), await startBuild('B', values.b!, upUrl)];
  for (const b of builds) await runLoad(b.url, body, b.headers, 8, 6);
  const f = (n: number, d = 0) => n.toFixed(d);
  for (let i = 0; i < rounds; i++) {
    for (const b of i % 2 === 0 ? builds : [...builds].reverse())
      b.runs.push(await measure(b, body, concurrency, seconds));
    const [a, b] = builds.map((x) => x.runs[i]);
    process.stdout.write(
      `round ${i + 1}: A ${f(a.rps)} req/s, CPU ${f(a.cpuUs)} us (main ${f(a.mainUs)}) | ` +
        `B ${f(b.rps)} req/s, CPU ${f(b.cpuUs)} us (main ${f(b.mainUs)})\n`,
    );
  }
  const [a, b] = builds;
  const ratio = (pick: (r: Run) => number) => f(median(a.runs.map((r, i) => pick(b.runs[i]) / pick(r))), 3);
  process.stdout.write(
    `B / A, the median of ${rounds} paired rounds: req/s ${ratio((r) => r.rps)}x, ` +
      `CPU a request ${ratio((r) => r.cpuUs)}x, main thread ${ratio((r) => r.mainUs)}x, ` +
      `c=${concurrency} p99 ${ratio((r) => r.p99)}x\n`,
  );
}

main()
  .catch((e: unknown) => {
    process.stderr.write(`bench:ab failed: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  })
  .finally(() => {
    for (const c of children) c.kill('SIGTERM');
    setTimeout(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })), 1000);
  });
