/**
 * `npm run bench`: the gateway's speed, measured in one run on this machine.
 * Three processes: an instant loopback upstream, the gateway (compiled, on SQLite, with
 * the chain from ./gateway.yaml unless --plugins is given), and this load generator.
 * Prints requests/s at concurrency 1 and 32 direct vs through the gateway, the added p50
 * and p99, the added time to first streamed token, and the gateway's RSS idle and under load.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parse } from 'yaml';
import { runLoad, timeToFirstToken, type LoadResult } from './load';
import { hotPath } from './hot-path';

const root = resolve(__dirname, '../..');
const { values } = parseArgs({ options: { seconds: { type: 'string', default: '5' }, plugins: { type: 'string' } } });
const seconds = Number(values.seconds);

function readJsonLine(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((res, rej) => {
    let out = '';
    let found = false;
    child.stdout!.on('data', (d: Buffer) => {
      if (found) return; // keep draining the pipe (access logs) without keeping it
      out += d.toString();
      const m = pattern.exec(out);
      if (m) {
        found = true;
        res(m[1]);
      }
    });
    child.on('exit', (code) => rej(new Error(`process exited (${code}): ${out}`)));
  });
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

async function api(url: string, path: string, adminKey: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(url + path, { method: 'POST', headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (r.status >= 300) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return (await r.json()) as Record<string, unknown>;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-'));
  const upstream = spawn(process.execPath, [join(__dirname, 'upstream.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const upUrl = await readJsonLine(upstream, /"url":"([^"]+)"/);

  const rootCfg = parse(readFileSync(join(root, 'gateway.yaml'), 'utf8')) as { plugins: unknown[] };
  const plugins = values.plugins ? values.plugins.split(',') : rootCfg.plugins;
  const pluginNames = plugins.map((p) => (typeof p === 'string' ? p : Object.keys(p as object)[0]));
  const adminKey = 'bench-admin-key-0123456789abcdef';
  const cfgPath = join(dir, 'gateway.yaml');
  writeFileSync(
    cfgPath,
    JSON.stringify({
      server: { host: '127.0.0.1', port: 0, log_level: 'info' },
      store: { driver: 'sqlite', path: join(dir, 'bench.db') },
      providers: [{ name: 'up', type: 'openai', api_base: `${upUrl}/v1`, api_key: 'sk-bench' }],
      models: [{ id: 'bench/model', owned_by: 'bench', context_length: 128000, pricing: { prompt: 0.000001, completion: 0.000002 }, deployments: [{ provider: 'up', model: 'bench-model' }] }],
      plugins,
    }),
  );
  const gateway = spawn(process.execPath, [join(root, 'dist/src/cli.js'), 'start', '--config', cfgPath], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, GATEWAY_ADMIN_KEY: adminKey },
  });
  const gwUrl = await readJsonLine(gateway, /"url":"([^"]+)"/);

  const headers: Record<string, string> = {};
  if (pluginNames.includes('auth')) {
    const account = await api(gwUrl, '/v1/accounts', adminKey, { name: 'bench', credits: 1_000_000 });
    const key = await api(gwUrl, '/v1/keys', adminKey, { name: 'bench', account_id: (account.data as { id: string }).id });
    headers.authorization = `Bearer ${key.key as string}`;
  }

  const body = JSON.stringify({ model: 'bench/model', messages: [{ role: 'user', content: 'Hello, how are you?' }], max_tokens: 64 });
  const directBody = JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'Hello, how are you?' }], max_tokens: 64 });
  const streamBody = JSON.stringify({ model: 'bench/model', stream: true, messages: [{ role: 'user', content: 'Hello' }] });
  const directStream = JSON.stringify({ model: 'bench-model', stream: true, messages: [{ role: 'user', content: 'Hello' }] });
  const direct = `${upUrl}/v1/chat/completions`;
  const via = `${gwUrl}/v1/chat/completions`;

  await new Promise((r) => setTimeout(r, 1000));
  const idleRss = rssMb(gateway.pid!);

  // Warm-up (JIT, pools), then measure.
  await runLoad(via, body, headers, 8, 1);
  await runLoad(direct, directBody, {}, 8, 1);
  const results: Record<string, LoadResult> = {};
  const step = (m: string) => process.stderr.write(`bench: ${m}\n`);
  step('concurrency 1');
  results.direct1 = await runLoad(direct, directBody, {}, 1, seconds);
  results.gateway1 = await runLoad(via, body, headers, 1, seconds);
  step('concurrency 32');
  results.direct32 = await runLoad(direct, directBody, {}, 32, seconds);
  let loadRss = 0;
  const sampler = setInterval(() => (loadRss = Math.max(loadRss, rssMb(gateway.pid!))), 200);
  results.gateway32 = await runLoad(via, body, headers, 32, seconds);
  clearInterval(sampler);
  step('time to first token');
  const ttftDirect = await timeToFirstToken(direct, directStream, {}, 300);
  const ttftGateway = await timeToFirstToken(via, streamBody, headers, 300);

  const f = (n: number, d = 3) => n.toFixed(d);
  const lines = [
    `chain: ${pluginNames.join(' -> ')}   (${seconds}s per run, node ${process.version})`,
    '',
    '| run | requests/s | p50 ms | p99 ms | errors |',
    '|---|---|---|---|---|',
    ...Object.entries(results).map(([k, r]) => `| ${k} | ${f(r.rps, 0)} | ${f(r.p50)} | ${f(r.p99)} | ${r.errors} |`),
    '',
    `added p50 at concurrency 1: ${f(results.gateway1.p50 - results.direct1.p50)} ms (goal < 0.3)`,
    `added p99 at concurrency 1: ${f(results.gateway1.p99 - results.direct1.p99)} ms`,
    `gateway keeps ${f((100 * results.gateway32.rps) / results.direct32.rps, 1)}% of direct requests/s at concurrency 32 (goal >= 35%)`,
    `time to first token: direct ${f(ttftDirect)} ms, gateway ${f(ttftGateway)} ms, added ${f(ttftGateway - ttftDirect)} ms (goal < 1)`,
    `gateway RSS: idle ${f(idleRss, 1)} MB (goal < 60), under load ${f(loadRss, 1)} MB`,
  ];
  if (pluginNames.includes('metrics')) lines.push('', ...(await pluginCosts(gwUrl)));
  gateway.kill('SIGTERM');
  upstream.kill('SIGTERM');
  lines.push('', ...(await hotPath()));
  process.stdout.write(`${lines.join('\n')}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`bench failed: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});

/** Mean own time per request of each plugin, from the gateway's /metrics (routing's includes the upstream wait). */
async function pluginCosts(url: string): Promise<string[]> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const read = (suffix: string) =>
    new Map([...text.matchAll(new RegExp(`^gateway_plugin_duration_seconds_${suffix}\\{plugin="([^"]+)"\\} (\\S+)$`, 'gm'))].map((m) => [m[1], Number(m[2])]));
  const sums = read('sum');
  const counts = read('count');
  return [
    'plugin own time per request (mean over the whole run, from /metrics):',
    ...[...sums.entries()].map(([name, sum]) => `  ${name.padEnd(9)} ${((sum / (counts.get(name) || 1)) * 1e6).toFixed(1)} us${name === 'routing' ? ' (includes waiting for the upstream)' : ''}`),
  ];
}
