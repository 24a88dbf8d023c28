/**
 * The event-loop stall measurement of test/store/sqlite-worker.test.ts, run in a process of
 * its own so that nothing else (other tests' heaps and timers) shares the loop it watches.
 * Prints one JSON line: the loop's longest stall and p99, an idle thread's, the WAL's peak and end.
 */
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { openStore } from '../../src/store/index';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const size = (f: string) => {
  try {
    return statSync(f).size;
  } catch {
    return 0;
  }
};

async function main(): Promise<void> {
  const path = join(mkdtempSync(join(tmpdir(), 'gw-loop-')), 'gateway.db');
  const store = await openStore({ driver: 'sqlite', path });
  const acct = await store.accounts.create({ name: 'loop', credits: 1e15 });
  const body = {
    object: 'response',
    output: [{ type: 'message', content: [{ type: 'output_text', text: 'x'.repeat(400_000) }] }],
  };
  // The noise floor, measured at the same time: an idle thread's event-loop delay on this shared, busy machine.
  const sentinel = new Worker(
    `const { parentPort } = require('node:worker_threads'); const { monitorEventLoopDelay } = require('node:perf_hooks');
       const h = monitorEventLoopDelay({ resolution: 1 }); h.enable();
       parentPort.once('message', () => { h.disable(); parentPort.postMessage({ max: h.max, p99: h.percentile(99) }); });`,
    { eval: true },
  );
  await new Promise((r) => sentinel.once('online', r));
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  let walPeak = 0;
  // Light on this thread, heavy on the disk: 120 requests' store work with 400 KB stored responses.
  for (let i = 0; i < 120; i++) {
    const r = await store.credit.reserve(acct.id, null, 10);
    if (!r.ok) throw new Error('refused');
    await store.credit.settle(r.id, 5, null);
    await store.responses.put({
      id: `r${i}`,
      accountId: acct.id,
      model: 'm',
      status: 'completed',
      body,
      createdAt: Date.now(),
      expiresAt: null,
    });
    walPeak = Math.max(walPeak, size(`${path}-wal`));
  }
  // Idle now: the worker checkpoints the WAL, then truncates it.
  const deadline = Date.now() + 10000;
  while (size(`${path}-wal`) > 0 && Date.now() < deadline) await sleep(50);
  h.disable();
  sentinel.postMessage('stop');
  const idle = await new Promise<{ max: number; p99: number }>((r) => sentinel.once('message', r));
  await sentinel.terminate();
  const rows = await store.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM responses');
  await store.close();
  process.stdout.write(
    `${JSON.stringify({ max: h.max, p99: h.percentile(99), idle, walPeak, walEnd: size(`${path}-wal`), rows: rows?.n })}\n`,
  );
}

void main().then(() => process.exit(0));
