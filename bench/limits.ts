/**
 * The limits plugin's hot-path cost, in process: one admission and one finish of a
 * request against four scopes (key, account, model, key x model; rpm, tpm and
 * concurrency all on), with the memory counters and with Redis (one Lua script each,
 * sequential for latency and 32 at a time for throughput). Run: `npx tsx bench/limits.ts`
 * (Redis from GATEWAY_TEST_REDIS_URL, else redis://127.0.0.1:6379; keys under a fresh
 * prefix, expiring by themselves).
 */
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { MemoryCounterStore } from '../plugins/limits/memory-store';
import { RedisCounterStore } from '../plugins/limits/redis-store';
import type { CounterStore, ScopeLimits } from '../plugins/limits/counter-store';
import { percentile } from './load';

const scopes: ScopeLimits[] = [
  { id: 'k:bench-key', rpm: 1e9, tpm: 1e12, concurrency: 1e6 },
  { id: 'a:bench-account', rpm: 1e9, tpm: 1e12, concurrency: 1e6 },
  { id: 'm:mock/gpt-4o-mini', rpm: 1e9, tpm: 1e12, concurrency: 1e6 },
  { id: 'km:bench-key:mock/gpt-4o-mini', rpm: 1e9, tpm: 1e12, concurrency: 1e6 },
];

let seq = 0;
async function once(store: CounterStore): Promise<void> {
  const id = `r${seq++}`;
  const a = await store.admit({ id, tokens: 500, scopes });
  if (!a.ok) throw new Error('refused');
  await store.finish(id, scopes, 120);
}

async function sequential(store: CounterStore, n: number): Promise<{ p50: number; p99: number }> {
  const us: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await once(store);
    us.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  us.sort((a, b) => a - b);
  return { p50: percentile(us, 50), p99: percentile(us, 99) };
}

async function throughput(store: CounterStore, n: number, concurrency: number): Promise<number> {
  const t = performance.now();
  let left = n;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) await once(store);
    }),
  );
  return n / ((performance.now() - t) / 1000);
}

async function main(): Promise<void> {
  const lines: string[] = [];
  const memory = new MemoryCounterStore(60_000, 660_000);
  await sequential(memory, 20_000); // warm up
  const m = await sequential(memory, 100_000);
  lines.push(
    `memory: admit+finish p50 ${m.p50.toFixed(2)} us, p99 ${m.p99.toFixed(2)} us; ${Math.round(await throughput(memory, 100_000, 32)).toLocaleString('en')} req/s (4 scopes, 100k in the window)`,
  );
  await memory.close();

  const url = process.env.GATEWAY_TEST_REDIS_URL || 'redis://127.0.0.1:6379';
  const redis = new RedisCounterStore(
    { url, prefix: `bench-${randomBytes(4).toString('hex')}:`, windowMs: 60_000, leaseMs: 660_000, timeoutMs: 5000 },
    pino({ level: 'warn' }),
  );
  await redis.connect(2000);
  if (!redis.up) lines.push(`redis: not reachable at ${url}; skipped`);
  else {
    await sequential(redis, 500);
    const r = await sequential(redis, 3000);
    lines.push(
      `redis:  admit+finish p50 ${r.p50.toFixed(0)} us, p99 ${r.p99.toFixed(0)} us sequential; ${Math.round(await throughput(redis, 10_000, 32)).toLocaleString('en')} req/s at 32 concurrent (2 Lua calls per request)`,
    );
  }
  await redis.close();
  process.stdout.write(`${lines.join('\n')}\n`);
}

void main();
