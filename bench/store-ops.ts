/**
 * Store cost per request, measured on the store alone: each "request" does what the default
 * chain does (reserve, settle with ledger + generation record, store the response), `c` at a time.
 * Prints requests/s, main-thread busy time per request (event-loop utilization x wall / n),
 * CPU per request of the process and of the store's worker thread,
 * the worst event-loop delay seen, and DB+WAL bytes per 1,000 requests.
 * Run: npx tsx bench/store-ops.ts [n=5000] [c=32] [driver=sqlite]
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { openStore } from '../src/store/index';
import type { StoreConfig } from '../src/config/types';
import { storeFileBytes } from '../src/store/stats';
import { putStatement } from '../plugins/storage/store/repo';
import { storeExtensionsOf } from '../src/store/extensions';
import storage from '../plugins/storage';
import creditPlugin from '../plugins/credit';
import { CreditReservations } from '../plugins/credit/store/repo';
import { readdirSync, readFileSync } from 'node:fs';
import { generationRecord } from '../test/helpers/generation';

/** CPU milliseconds of each thread of this process (Linux), by thread id. */
function threadCpu(): Map<string, number> {
  const out = new Map<string, number>();
  try {
    for (const t of readdirSync('/proc/self/task')) {
      const f = readFileSync(`/proc/self/task/${t}/stat`, 'utf8').split(') ')[1].split(' ');
      out.set(t, (Number(f[11]) + Number(f[12])) * 10);
    }
  } catch {
    // not Linux: no per-thread figures
  }
  return out;
}

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 5000);
  const c = Number(process.argv[3] ?? 32);
  const driver = process.argv[4] ?? 'sqlite';
  const path = join(mkdtempSync(join(tmpdir(), 'gw-bench-')), 'gateway.db');
  const config: StoreConfig =
    driver === 'postgres'
      ? { driver, url: process.env.GATEWAY_TEST_POSTGRES_URL!, pool_size: 10 }
      : driver === 'memory'
        ? { driver }
        : { driver: 'sqlite', path };
  // As the gateway opens it (with SQLite's redo log); REDO=0 for the store as a CLI command opens it.
  const store = await openStore(
    config,
    { redo: process.env.REDO !== '0' },
    storeExtensionsOf([
      { plugin: creditPlugin, index: 0 },
      { plugin: storage, index: 1 },
    ]),
  );
  const acct = await store.accounts.create({ name: 'bench', credits: 1e15 });
  const hash = 'b'.repeat(64);
  await store.keys.create({ hash, accountId: acct.id, name: 'bench', label: 'x' });
  const body = {
    object: 'response',
    output: [{ type: 'message', content: [{ type: 'output_text', text: 'hello '.repeat(40) }] }],
  };
  let next = 0;
  const ahead = process.env.AHEAD !== '0';
  const refused = (e: unknown) => {
    throw e;
  };
  const one = async (i: number) => {
    const r = await CreditReservations.of(store).reserve(acct.id, hash, 1000);
    if (!r.ok) throw new Error('refused');
    const id = `chatcmpl-bench${i}`;
    const now = Date.now();
    // As the default chain does: the stored response commits in the settlement's transaction.
    const put = putStatement({
      id,
      accountId: acct.id,
      model: 'm',
      status: 'completed',
      body,
      createdAt: now,
      expiresAt: now + 86400_000,
    });
    const gen = generationRecord({
      id,
      accountId: acct.id,
      keyHash: hash,
      completionTokens: 40,
      cost: 500,
      latencyMs: 1.5,
      createdAt: now,
    });
    // As the credit plugin does: done once in the ahead log (AHEAD=0: once the worker ran it).
    if (ahead) await CreditReservations.of(store).settleLogged(r.id, 500, gen, null, [put], refused);
    else await CreditReservations.of(store).settle(r.id, 500, gen, null, [put]);
  };
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const before = storeFileBytes(config);
  const elu0 = performance.eventLoopUtilization();
  const cpu0 = process.cpuUsage();
  const th0 = threadCpu();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (next < n) await one(next++);
    }),
  );
  const wall = performance.now() - t0;
  const elu = performance.eventLoopUtilization(elu0);
  const cpu = process.cpuUsage(cpu0);
  const th1 = threadCpu();
  // The busiest thread other than the main one is the store's worker (SQLite file databases).
  let worker = 0;
  for (const [t, ms] of th1) if (t !== String(process.pid)) worker = Math.max(worker, ms - (th0.get(t) ?? 0));
  h.disable();
  const after = storeFileBytes(config);
  console.log(
    JSON.stringify({
      driver,
      n,
      c,
      req_per_s: Math.round((n / wall) * 1000),
      main_thread_us_per_req: Math.round((elu.active / n) * 1000),
      wall_us_per_req: Math.round((wall / n) * 1000),
      process_cpu_us_per_req: Math.round((cpu.user + cpu.system) / n),
      worker_cpu_us_per_req: Math.round((worker / n) * 1000),
      loop_delay_max_ms: +(h.max / 1e6).toFixed(1),
      loop_delay_p99_ms: +(h.percentile(99) / 1e6).toFixed(1),
      db_wal_bytes_per_1000: Math.round(((after - before) / n) * 1000),
    }),
  );
  await store.close();
}

void main();
