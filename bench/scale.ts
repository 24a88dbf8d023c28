/**
 * `npm run bench:scale`: whether a request costs the same when the gateway holds a lot (issue 44's held goal: CPU per
 * request and p99 within 1.25x from 10 to 100,000 keys, 1 to 2,000 models, 0 to 300,000 stored records). Two
 * full-chain gateways on SQLite, side by side: "small" (10 keys, 1 model, no records) and "large" (100,000 keys,
 * 2,000 models, 300,000 generation records). The large one's keys, accounts and records beyond the ones requests use
 * are written straight into its database (the records through the same INSERT the settlements make, so the rollup
 * triggers run), not through a million requests. Both serve a mix: 32 connections over the same number of keys (10),
 * in the large one each connection with its own model; the targets take turns within each round. Options: --rounds 3, --seconds 5.
 */
import Database from 'better-sqlite3';
import type { ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { GENERATION_INSERT, generationParams, type Generation } from '../src/store/generations';
import { generationRecord } from '../test/helpers/generation';
import { adminPost, defaultPlugins, startGateway, startProcess, type BenchGateway } from './gateway-target';
import { median, runLoadMix, type LoadResult, type MixedRequest } from './load';
import { cpuMs } from './proc';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '3' }, seconds: { type: 'string', default: '5' } },
});
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const CONNECTIONS = 32;
const LARGE = { keys: 100_000, models: 2_000, records: 300_000, accounts: 1_000 };
/** Keys the requests use, in both targets (the small one holds no others), so that only what is held differs. */
const USED_KEYS = 10;

interface ScaleTarget {
  name: string;
  gw: BenchGateway;
  mix: MixedRequest[];
}

const body = (model: string) =>
  JSON.stringify({ model, messages: [{ role: 'user', content: 'Hello, how are you?' }], max_tokens: 64 });

/** `n` real keys of one new account, made through the admin API (their secrets are needed to send requests). */
async function realKeys(url: string, n: number): Promise<string[]> {
  const account = await adminPost(url, '/v1/accounts', { name: 'scale', credits: 9_000_000 });
  const id = (account.data as { id: string }).id;
  const keys: string[] = [];
  for (let i = 0; i < n; i++)
    keys.push((await adminPost(url, '/v1/keys', { name: `k${i}`, account_id: id })).key as string);
  return keys;
}

/** The large target's bulk: accounts and keys no request uses, and generation records over the last 30 days. */
function fillLarge(db: string, usedKeys: number): void {
  const sql = new Database(db);
  sql.pragma('busy_timeout = 10000');
  const now = Date.now();
  const insertAccount = sql.prepare(
    'INSERT INTO accounts (id, name, credits, created_at, updated_at) VALUES (?, ?, ?, ?, ?)',
  );
  const insertKey = sql.prepare(
    'INSERT INTO api_keys (hash, account_id, name, label, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)',
  );
  const insertRecord = sql.prepare(GENERATION_INSERT);
  const hashes: string[] = [];
  sql.transaction(() => {
    for (let a = 0; a < LARGE.accounts; a++) insertAccount.run(`acct_scale${a}`, `scale ${a}`, 1e12, now, now);
    for (let k = 0; k < LARGE.keys - usedKeys; k++) {
      const hash = createHash('sha256').update(randomBytes(16)).digest('hex');
      hashes.push(hash);
      insertKey.run(hash, `acct_scale${k % LARGE.accounts}`, `filler ${k}`, 'sk-gw-...0000', now, now);
    }
  })();
  for (let start = 0; start < LARGE.records; start += 10_000) {
    sql.transaction(() => {
      for (let i = start; i < start + 10_000; i++) insertRecord.run(...generationParams(record(i, now, hashes)));
    })();
  }
  sql.close();
}

function record(i: number, now: number, hashes: string[]): Generation {
  const h = (i * 2654435761) >>> 0;
  return generationRecord({
    id: `gen-scale-${i}`,
    accountId: `acct_scale${h % LARGE.accounts}`,
    keyHash: hashes[h % hashes.length],
    model: `scale/m-${h % LARGE.models}`,
    provider: 'up',
    deployment: 'up/bench-model',
    promptTokens: h % 2000,
    completionTokens: (h >>> 3) % 800,
    cost: h % 100_000,
    latencyMs: (h >>> 5) % 3000,
    createdAt: now - 1 - (h % (30 * 86_400_000)),
  });
}

async function startTargets(upUrl: string, children: ChildProcess[], dirs: string[]): Promise<ScaleTarget[]> {
  const plugins = defaultPlugins();
  const models = Array.from({ length: LARGE.models }, (_, i) => ({
    id: `scale/m-${i}`,
    owned_by: 'bench',
    context_length: 128000,
    pricing: { prompt: 0.000001, completion: 0.000002 },
    deployments: [{ provider: 'up', model: 'bench-model' }],
  }));
  const made: ScaleTarget[] = [];
  for (const [name, more] of [
    ['small', {}],
    ['large', { models }],
  ] as const) {
    const dir = mkdtempSync(join(tmpdir(), `gw-scale-${name}-`));
    dirs.push(dir);
    const gw = await startGateway(dir, upUrl, plugins, children, {}, more);
    const keys = await realKeys(gw.url, USED_KEYS);
    if (name === 'large') fillLarge(gw.db, keys.length + 1);
    const mix = Array.from({ length: CONNECTIONS }, (_, i) => ({
      body: body(name === 'small' ? 'bench/model' : `scale/m-${(i * 61) % LARGE.models}`),
      headers: { authorization: `Bearer ${keys[i % keys.length]}` },
    }));
    made.push({ name, gw, mix });
  }
  return made;
}

interface Run {
  cpuUs: number;
  c32: LoadResult;
  c1: LoadResult;
}

async function measure(t: ScaleTarget): Promise<Run> {
  const url = `${t.gw.url}/v1/chat/completions`;
  const c1 = await runLoadMix(url, t.mix.slice(0, 1), 1, seconds / 2);
  const before = cpuMs(t.gw.child.pid!);
  const c32 = await runLoadMix(url, t.mix, CONNECTIONS, seconds);
  const cpuUs = ((cpuMs(t.gw.child.pid!) - before) * 1000) / c32.requests;
  if (c1.errors + c32.errors > 0) throw new Error(`${t.name}: ${c1.errors + c32.errors} requests failed`);
  return { cpuUs, c32, c1 };
}

function report(runs: Record<string, Run[]>): string[] {
  const f = (n: number, d = 2) => n.toFixed(d);
  const ratios = (pick: (r: Run) => number) => {
    const each = runs.large.map((r, i) => pick(r) / pick(runs.small[i]));
    return `${f(median(each))}x (${each.map((x) => f(x)).join(', ')})`;
  };
  const row = (name: string, what: string) => {
    const rs = runs[name];
    return `| ${name} | ${what} | ${f(median(rs.map((r) => r.cpuUs)), 0)} | ${f(median(rs.map((r) => r.c32.p99)))} | ${f(median(rs.map((r) => r.c1.p99)))} | ${f(median(rs.map((r) => r.c32.rps)), 0)} |`;
  };
  const l = LARGE;
  return [
    `scale (full chain, SQLite; ${seconds}s per run, ${rounds} rounds taking the targets in turn, node ${process.version}):`,
    '',
    '| target | holds | CPU us/req at c=32 | c=32 p99 ms | c=1 p99 ms | c=32 req/s |',
    '|---|---|---|---|---|---|',
    row('small', '10 keys, 1 model, no records'),
    row(
      'large',
      `${l.keys.toLocaleString('en')} keys, ${l.models.toLocaleString('en')} models, ${l.records.toLocaleString('en')} records`,
    ),
    '',
    `large / small, median (rounds): CPU a request ${ratios((r) => r.cpuUs)}, c=32 p99 ${ratios((r) => r.c32.p99)}, ` +
      `c=1 p99 ${ratios((r) => r.c1.p99)} (goal <= 1.25x)`,
  ];
}

async function main(): Promise<void> {
  const children: ChildProcess[] = [];
  const dirs: string[] = [];
  try {
    const up = await startProcess([join(__dirname, 'upstream.js')], process.env, children);
    const targets = await startTargets(up.url, children, dirs);
    for (const t of targets) await runLoadMix(`${t.gw.url}/v1/chat/completions`, t.mix, CONNECTIONS, 5);
    const runs: Record<string, Run[]> = { small: [], large: [] };
    for (let n = 1; n <= rounds; n++) {
      for (const t of n % 2 ? targets : [...targets].reverse()) {
        process.stderr.write(`bench: ${t.name}: round ${n}\n`);
        runs[t.name].push(await measure(t));
      }
    }
    process.stdout.write(`${report(runs).join('\n')}\n`);
  } finally {
    for (const c of children) c.kill('SIGTERM');
    setTimeout(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })), 1000);
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`bench failed: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exitCode = 1;
});
