/**
 * What a streamed answer costs per chunk: CPU a request of a short stream (SMALL chunks) and of a long one (LARGE),
 * the difference over the extra chunks, for the floor (bytes piped), the gateway on a same-wire upstream (OpenAI chat
 * SSE to the chat endpoint) and translated (Anthropic, Gemini to chat chunks). The targets take turns within each
 * round, so a ratio compares runs seconds apart on this shared machine; each ratio is the median of the rounds' own.
 * Standalone: `npm run bench:stream` (--rounds, --seconds, --wires oa,an,ge; --a <checkout with a built dist/> adds
 * that build's gateways, `core A` and `full A`, to the same rounds); `npm run bench` prints the same rows.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { median, runLoad } from './load';
import { cpuMs } from './proc';
import { startGateway, startProcess } from './gateway-target';
import type * as GatewayTarget from './gateway-target';

export const SMALL = 10;
export const LARGE = 1000;

interface StreamTarget {
  name: string;
  url: string;
  pid: number;
  headers: Record<string, string>;
  /** Model id prefixes this target serves: oa (OpenAI chat SSE), an (Anthropic), ge (Gemini). */
  wires: string[];
}

const WIRE_NAMES: Record<string, string> = { oa: 'same wire', an: 'Anthropic', ge: 'Gemini' };

/** The providers and models a bench gateway needs for the stream rows. */
function streamModels(upUrl: string) {
  const providers = [
    { name: 'an', type: 'anthropic', api_base: upUrl, api_key: 'sk-bench' },
    { name: 'ge', type: 'gemini', api_base: upUrl, api_key: 'bench' },
  ];
  const models = ['oa', 'an', 'ge'].flatMap((w) =>
    [SMALL, LARGE].map((n) => ({
      id: `${w}/chunks-${n}`,
      owned_by: 'bench',
      context_length: 128000,
      pricing: { prompt: 0.000001, completion: 0.000002 },
      deployments: [{ provider: w === 'oa' ? 'up' : w, model: `chunks-${n}` }],
    })),
  );
  return { providers, models };
}

const body = (model: string) =>
  JSON.stringify({ model, stream: true, max_tokens: 4096, messages: [{ role: 'user', content: 'Hello' }] });

/** CPU of the target a streamed request of `model`, us, over `seconds` of load at c=2. */
async function cpuPerRequest(t: StreamTarget, model: string, seconds: number): Promise<number> {
  const before = cpuMs(t.pid);
  const r = await runLoad(t.url, body(model), t.headers, 2, seconds);
  if (r.errors > 0) throw new Error(`${t.name} ${model}: ${r.errors} requests failed`);
  return ((cpuMs(t.pid) - before) * 1000) / r.requests;
}

/** CPU per extra chunk, us: (a long stream's CPU - a short one's) / the extra chunks. */
async function perChunk(t: StreamTarget, wire: string, seconds: number): Promise<number> {
  const small = await cpuPerRequest(t, `${wire}/chunks-${SMALL}`, seconds / 2);
  const large = await cpuPerRequest(t, `${wire}/chunks-${LARGE}`, seconds);
  return (large - small) / (LARGE - SMALL);
}

/**
 * Start the stream upstream, the floor and the gateways (core and full chains) for the stream rows; with `other` (a
 * checkout with a built dist/), its gateways too, named `core A` and `full A`, measured in the same rounds.
 */
export async function startStreamTargets(
  root: string,
  fullPlugins: unknown[],
  children: ChildProcess[],
  dirs: string[],
  other?: string,
): Promise<StreamTarget[]> {
  const up = await startProcess([join(root, 'stream-upstream.js')], process.env, children);
  const floor = await startProcess([join(root, 'floor.js'), up.url], process.env, children);
  const targets: StreamTarget[] = [
    { name: 'floor', url: `${floor.url}/v1/chat/completions`, pid: floor.child.pid!, headers: {}, wires: ['oa'] },
  ];
  const builds: Array<[string, typeof startGateway]> = [['', startGateway]];
  if (other) {
    const target = require(join(resolve(other), 'dist/bench/gateway-target.js')) as typeof GatewayTarget;
    builds.unshift([' A', target.startGateway]);
  }
  for (const [suffix, start] of builds)
    for (const [chain, plugins] of [
      ['core', ['routing']],
      ['full', fullPlugins],
    ] as const) {
      const name = chain + suffix;
      const dir = mkdtempSync(join(tmpdir(), `gw-bench-stream-${chain}-`));
      dirs.push(dir);
      const gw = await start(dir, up.url, [...plugins], children, {}, streamModels(up.url));
      targets.push({
        name,
        url: `${gw.url}/v1/chat/completions`,
        pid: gw.child.pid!,
        headers: gw.headers,
        wires: ['oa', 'an', 'ge'],
      });
    }
  return targets;
}

/** Rounds of every target's per-chunk CPU on each wire it serves; the rows to print. */
export async function streamCost(targets: StreamTarget[], rounds: number, seconds: number): Promise<string[]> {
  for (const t of targets) for (const w of t.wires) await cpuPerRequest(t, `${w}/chunks-${LARGE}`, 2); // warm-up
  const runs: Record<string, number[]> = {};
  const ratios: Record<string, number[]> = {};
  for (let n = 1; n <= rounds; n++) {
    const floor = await perChunk(targets[0], 'oa', seconds);
    (runs['floor oa'] ??= []).push(floor);
    for (const t of targets.slice(1))
      for (const w of t.wires) {
        process.stderr.write(`bench: stream ${t.name} ${w} round ${n}\n`);
        const us = await perChunk(t, w, seconds);
        (runs[`${t.name} ${w}`] ??= []).push(us);
        (ratios[`${t.name} ${w}`] ??= []).push(us / floor);
      }
  }
  const f = (x: number) => x.toFixed(2);
  const lines = [
    `stream CPU per extra chunk (${SMALL} -> ${LARGE} chunks, c=2, ${rounds} rounds; median, each round in brackets):`,
    '',
    '| target | upstream wire | us per extra chunk | / floor (rounds) | goal |',
    '|---|---|---|---|---|',
    `| floor | OpenAI SSE piped | ${f(median(runs['floor oa']))} | 1 | |`,
  ];
  for (const t of targets.slice(1))
    for (const w of t.wires) {
      const k = `${t.name} ${w}`;
      const goal = w === 'oa' ? '<= 2x' : '<= 4x';
      lines.push(
        `| ${t.name} | ${WIRE_NAMES[w]} | ${f(median(runs[k]))} | ${f(median(ratios[k]))}x (${ratios[k].map(f).join(', ')}) | ${goal} |`,
      );
    }
  return [...lines, ...pairedRows(targets, runs)];
}

/** With another build's gateways (`core A`, `full A`): this build's per-chunk CPU over theirs, round by round. */
function pairedRows(targets: StreamTarget[], runs: Record<string, number[]>): string[] {
  const f = (x: number) => x.toFixed(3);
  const out: string[] = [];
  for (const t of targets)
    for (const w of t.wires) {
      const a = runs[`${t.name} A ${w}`];
      if (!a) continue;
      const b = runs[`${t.name} ${w}`];
      const r = b.map((x, i) => x / a[i]);
      out.push(`- ${t.name}, ${WIRE_NAMES[w]}: B / A ${f(median(r))} (${r.map(f).join(', ')})`);
    }
  return out.length > 0 ? ['', 'this build (B) against --a (A), per extra chunk, paired by round:', ...out] : [];
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: '3' },
      seconds: { type: 'string', default: '4' },
      a: { type: 'string' },
      wires: { type: 'string', default: 'oa,an,ge' },
    },
  });
  const children: ChildProcess[] = [];
  const dirs: string[] = [];
  try {
    const { defaultPlugins } = await import('./gateway-target');
    const targets = await startStreamTargets(__dirname, defaultPlugins(), children, dirs, values.a);
    const wires = values.wires.split(',');
    for (const t of targets.slice(1)) t.wires = t.wires.filter((w) => wires.includes(w));
    const lines = await streamCost(targets, Number(values.rounds), Number(values.seconds));
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    for (const c of children) c.kill('SIGTERM');
    setTimeout(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })), 1000);
  }
}

if (require.main === module)
  main().catch((e: unknown) => {
    process.stderr.write(`bench failed: ${e instanceof Error ? e.stack : String(e)}\n`);
    process.exitCode = 1;
  });
