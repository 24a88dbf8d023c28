import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';

/** The repository (this file runs from dist/bench/). */
const root = resolve(__dirname, '../..');

/** The admin key every bench gateway starts with (GATEWAY_ADMIN_KEY). */
export const BENCH_ADMIN_KEY = 'bench-admin-key-0123456789abcdef';

/**
 * Start a node process that prints a JSON line with its "url"; resolves with the child and that url. The child is
 * added to `track` at once (whoever cleans up kills it even if it never prints its url).
 */
export function startProcess(
  args: string[],
  env: NodeJS.ProcessEnv,
  track: ChildProcess[] = [],
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env });
  track.push(child);
  return new Promise((res, rej) => {
    let out = '';
    let found = false;
    child.stdout!.on('data', (d: Buffer) => {
      if (found) return; // keep draining the pipe (access logs) without keeping it
      out += d.toString();
      const m = /"url":"([^"]+)"/.exec(out);
      if (m) {
        found = true;
        res({ child, url: m[1] });
      }
    });
    child.on('exit', (code) => rej(new Error(`process exited (${code}): ${out}`)));
  });
}

/**
 * The node options a bench gateway starts with: with GATEWAY_BENCH_CPU_PROF=DIR, every gateway process (cluster
 * workers inherit it) writes a V8 CPU profile there when it exits.
 */
export function gatewayNodeArgs(): string[] {
  const dir = process.env.GATEWAY_BENCH_CPU_PROF;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
}

/** POST an admin API call with the bench's admin key. */
export async function adminPost(url: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(url + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${BENCH_ADMIN_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (r.status >= 300) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return (await r.json()) as Record<string, unknown>;
}

/**
 * Write a bench gateway's config into `dir`: loopback port, SQLite in `dir` (with `store`'s other settings; a `store`
 * naming its own driver, e.g. postgres with its url, is taken as it is), the
 * loopback upstream at `upUrl` as an OpenAI provider serving `bench/model`, and `plugins`. Returns the config's and
 * the database's paths.
 */
export function writeGatewayConfig(
  dir: string,
  upUrl: string,
  plugins: unknown[],
  store: Record<string, unknown> = {},
  more: { providers?: unknown[]; models?: unknown[] } = {},
): { cfgPath: string; db: string } {
  const cfgPath = join(dir, 'gateway.yaml');
  const db = join(dir, 'bench.db');
  writeFileSync(
    cfgPath,
    JSON.stringify({
      server: { host: '127.0.0.1', port: 0, log_level: 'info' },
      store: store.driver ? store : { ...store, driver: 'sqlite', path: db },
      providers: [
        { name: 'up', type: 'openai', api_base: `${upUrl}/v1`, api_key: 'sk-bench' },
        ...(more.providers ?? []),
      ],
      models: [
        {
          id: 'bench/model',
          owned_by: 'bench',
          context_length: 128000,
          pricing: { prompt: 0.000001, completion: 0.000002 },
          deployments: [{ provider: 'up', model: 'bench-model' }],
        },
        ...(more.models ?? []),
      ],
      plugins,
    }),
  );
  return { cfgPath, db };
}

/** ./gateway.yaml's plugins: the full chain the bench measures. */
export function defaultPlugins(): unknown[] {
  return (parse(readFileSync(join(root, 'gateway.yaml'), 'utf8')) as { plugins: unknown[] }).plugins;
}

/** A bench gateway: its process, its url, its SQLite file, and the headers a request needs (the key, with auth). */
export interface BenchGateway {
  child: ChildProcess;
  url: string;
  db: string;
  headers: Record<string, string>;
}

/**
 * Start a gateway from dist/ with its config in `dir` (writeGatewayConfig, with `store`) and the bench's admin key;
 * with the auth plugin in `plugins`, an account with credit and a key are made through the admin API for its requests.
 */
export async function startGateway(
  dir: string,
  upUrl: string,
  plugins: unknown[],
  track: ChildProcess[] = [],
  store: Record<string, unknown> = {},
  more: Parameters<typeof writeGatewayConfig>[4] = {},
): Promise<BenchGateway> {
  const { cfgPath, db } = writeGatewayConfig(dir, upUrl, plugins, store, more);
  const { child, url } = await startProcess(
    [...gatewayNodeArgs(), join(root, 'dist/src/cli.js'), 'start', '--config', cfgPath],
    { ...process.env, GATEWAY_ADMIN_KEY: BENCH_ADMIN_KEY },
    track,
  );
  const headers: Record<string, string> = {};
  if (plugins.some((p) => (typeof p === 'string' ? p : Object.keys(p as object)[0]) === 'auth')) {
    const account = await adminPost(url, '/v1/accounts', { name: 'bench', credits: 9_000_000 });
    const key = await adminPost(url, '/v1/keys', { name: 'bench', account_id: (account.data as { id: string }).id });
    headers.authorization = `Bearer ${key.key as string}`;
  }
  return { child, url, db, headers };
}
