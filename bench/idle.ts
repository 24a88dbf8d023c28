/**
 * `node dist/bench/idle.js [--runs 3] [--wait 16]`: the full chain's idle RSS alone, without load, the
 * way `npm run bench` measures it (gateway.yaml's plugins, SQLite, the loopback upstream, an account
 * and a key made through the admin API, then 16 s to settle), once per run in a fresh process, so a
 * memory change can be checked in a minute without disturbing anything else on the machine.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { rssMb } from './proc';
import { defaultPlugins, startGateway, startProcess } from './gateway-target';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    wait: { type: 'string', default: '16' },
    smaps: { type: 'boolean', default: false },
  },
});
/** Resident kB by kind, from /proc/<pid>/smaps_rollup. */
function rollup(pid: number): string {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);
  return `anon ${(kb('Anonymous') / 1024).toFixed(1)} MB, file ${((kb('Rss') - kb('Anonymous')) / 1024).toFixed(1)} MB`;
}

/** `--smaps`: resident kB per mapped file (anonymous memory as [anon]), the largest first. */
function byMapping(pid: number): string {
  const rss = new Map<string, number>();
  let name = '';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) name = head[1] || '[anon]';
    const m = /^Rss:\s+(\d+) kB/.exec(line);
    if (m) rss.set(name, (rss.get(name) ?? 0) + Number(m[1]));
  }
  return [...rss]
    .filter(([, kb]) => kb >= 200)
    .sort((a, b) => b[1] - a[1])
    .map(([n, kb]) => `  ${String(kb).padStart(7)} kB ${n}\n`)
    .join('');
}

async function once(upUrl: string, plugins: unknown[]): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-idle-'));
  const track: ChildProcess[] = [];
  try {
    const { child } = await startGateway(dir, upUrl, plugins, track);
    await new Promise((r) => setTimeout(r, Number(values.wait) * 1000));
    const rss = rssMb(child.pid!);
    const threads = readdirSync(`/proc/${child.pid}/task`).length;
    process.stdout.write(`idle RSS ${rss.toFixed(1)} MB (${rollup(child.pid!)}; ${threads} threads)\n`);
    if (values.smaps) process.stdout.write(byMapping(child.pid!));
    return rss;
  } finally {
    for (const c of track) {
      if (c.exitCode !== null || c.signalCode !== null) continue;
      c.kill('SIGTERM');
      await new Promise((r) => c.once('exit', r));
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const up = await startProcess([join(__dirname, 'upstream.js')], process.env);
  const plugins = defaultPlugins();
  const all: number[] = [];
  try {
    for (let i = 0; i < Number(values.runs); i++) all.push(await once(up.url, plugins));
  } finally {
    up.child.kill('SIGTERM');
  }
  const mean = all.reduce((a, b) => a + b, 0) / all.length;
  process.stdout.write(
    `${all.length} runs: mean ${mean.toFixed(1)} MB, min ${Math.min(...all).toFixed(1)}, max ${Math.max(...all).toFixed(1)}\n`,
  );
}

main().catch((e: unknown) => {
  process.stderr.write(`${String(e)}\n`);
  process.exit(1);
});
