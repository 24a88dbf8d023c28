/**
 * What a large request body costs: CPU per MB (a 4 MB request's CPU less a 256 KB one's, over the 3.75 MB between)
 * and the RSS a 4 MB request raises the process by (its peak while such requests run one at a time, over its RSS just
 * before), for the floor and the gateway's core and full chains. The body is what a multimodal client sends: a
 * question and one base64 image in a data: URL. The targets take turns within each round; ratios are the median of
 * the rounds' own. Standalone: `npm run bench:body`; `npm run bench` prints the same rows.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { median } from './load';
import { cpuMs, rssMb } from './proc';
import { defaultPlugins, startGateway, startProcess } from './gateway-target';

const SMALL = 256 * 1024;
const LARGE = 4 * 1024 * 1024;

interface BodyTarget {
  name: string;
  url: string;
  pid: number;
  headers: Record<string, string>;
}

/** A chat request of about `bytes` bytes: a short question and one PNG as base64. */
function imageBody(bytes: number): string {
  const data = Buffer.alloc(Math.floor((bytes * 3) / 4), 7).toString('base64');
  return JSON.stringify({
    model: 'bench/model',
    max_tokens: 16,
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in this image?' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${data}` } },
        ],
      },
    ],
  });
}

/** CPU a request of `body`, us, and the RSS peak over the RSS before, MB, over `count` requests one at a time. */
async function measure(t: BodyTarget, body: string, count: number): Promise<{ cpuUs: number; rssUp: number }> {
  const before = rssMb(t.pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(t.pid))), 10);
  const cpu = cpuMs(t.pid);
  const u = new URL(t.url);
  const pool = new Pool(u.origin, { connections: 1 });
  const headers = { 'content-type': 'application/json', ...t.headers };
  // Sequential: one request's memory at a time.
  for (let i = 0; i < count; i++) {
    const res = await pool.request({ path: u.pathname, method: 'POST', headers, body });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`${t.name}: ${res.statusCode} ${text.slice(0, 300)}`);
  }
  clearInterval(sampler);
  await pool.close();
  return { cpuUs: ((cpuMs(t.pid) - cpu) * 1000) / count, rssUp: peak - before };
}

export async function startBodyTargets(
  root: string,
  fullPlugins: unknown[],
  children: ChildProcess[],
  dirs: string[],
): Promise<BodyTarget[]> {
  const up = await startProcess([join(root, 'upstream.js')], process.env, children);
  const floor = await startProcess([join(root, 'floor.js'), up.url], process.env, children);
  const targets: BodyTarget[] = [
    { name: 'floor', url: `${floor.url}/v1/chat/completions`, pid: floor.child.pid!, headers: {} },
  ];
  for (const [name, plugins] of [
    ['core', ['routing']],
    ['full', fullPlugins],
  ] as const) {
    const dir = mkdtempSync(join(tmpdir(), `gw-bench-body-${name}-`));
    dirs.push(dir);
    const gw = await startGateway(dir, up.url, [...plugins], children);
    targets.push({ name, url: `${gw.url}/v1/chat/completions`, pid: gw.child.pid!, headers: gw.headers });
  }
  return targets;
}

export async function bodyCost(targets: BodyTarget[], rounds: number, count: number): Promise<string[]> {
  const small = imageBody(SMALL);
  const large = imageBody(LARGE);
  for (const t of targets) await measure(t, large, 5); // warm-up
  const perMb: Record<string, number[]> = {};
  const rss: Record<string, number[]> = {};
  for (let n = 1; n <= rounds; n++)
    for (const t of targets) {
      process.stderr.write(`bench: body ${t.name} round ${n}\n`);
      const s = await measure(t, small, count);
      const l = await measure(t, large, count);
      (perMb[t.name] ??= []).push((l.cpuUs - s.cpuUs) / 1000 / ((large.length - small.length) / 1024 / 1024));
      (rss[t.name] ??= []).push(l.rssUp);
    }
  const f = (x: number) => x.toFixed(2);
  const ratio = (k: string, m: Record<string, number[]>) =>
    `${f(median(m[k].map((v, i) => v / m.floor[i])))}x (${m[k].map((v, i) => f(v / m.floor[i])).join(', ')})`;
  const lines = [
    `request bodies (a question and one base64 image; 256 KB -> 4 MB, ${count} requests one at a time, ${rounds} rounds):`,
    '',
    '| target | CPU ms per MB | / floor (rounds) | RSS peak over before, 4 MB requests, MB | / floor (rounds) |',
    '|---|---|---|---|---|',
  ];
  for (const t of targets) {
    const k = t.name;
    lines.push(
      `| ${k} | ${f(median(perMb[k]))} | ${k === 'floor' ? '1' : ratio(k, perMb)} | ${f(median(rss[k]))} | ${k === 'floor' ? '1' : ratio(k, rss)} |`,
    );
  }
  lines.push('', 'goals: CPU per MB <= 1.2x the floor; RSS peak per large request <= 2x the floor');
  return lines;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { rounds: { type: 'string', default: '3' }, count: { type: 'string', default: '30' } },
  });
  const children: ChildProcess[] = [];
  const dirs: string[] = [];
  try {
    const targets = await startBodyTargets(__dirname, defaultPlugins(), children, dirs);
    const lines = await bodyCost(targets, Number(values.rounds), Number(values.count));
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
