/**
 * Per-request cost of the hot-path pieces, measured in process (no sockets): the params
 * plugin's validation and mapping, and the credit reserve + settle on SQLite (WAL, a
 * file). Prints the median per operation. Part of `npm run bench`.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateChatRequest } from '../plugins/params/validate';
import { functionsToTools } from '../plugins/params/legacy-functions';
import { countPromptTokens } from '../src/tokens/count';
import { openStore } from '../src/store/index';
import { storeExtensionsOf } from '../src/store/extensions';
import creditPlugin from '../plugins/credit';
import { CreditReservations } from '../plugins/credit/store/repo';
import { percentile } from './load';

function median(samples: number[]): number {
  samples.sort((a, b) => a - b);
  return percentile(samples, 50);
}

async function time(n: number, fn: () => unknown): Promise<number> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    const r = fn();
    if (r instanceof Promise) await r;
    out.push(Number(process.hrtime.bigint() - t) / 1000);
  }
  return median(out);
}

export async function hotPath(): Promise<string[]> {
  const typical = () => ({
    model: 'bench/model',
    messages: [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: 'Summarise the plot of Hamlet in three sentences, please.' },
    ],
    temperature: 0.7,
    max_tokens: 256,
    top_p: 0.9,
    stream: false,
    user: 'user-42',
  });
  await time(2000, () => validateChatRequest(typical(), { timeoutMs: 600000 }, () => 128000));
  const params = await time(20000, () => {
    const r = typical();
    const p = validateChatRequest(r, { timeoutMs: 600000 }, () => 128000 - countPromptTokens(r as never));
    functionsToTools(r as never);
    return p;
  });

  // Opened as the gateway opens it: with SQLite's redo log (a settlement is answered once logged).
  const path = join(mkdtempSync(join(tmpdir(), 'gw-hot-')), 'bench.db');
  const extensions = storeExtensionsOf([{ plugin: creditPlugin, index: 0 }]);
  const store = await openStore({ driver: 'sqlite', path }, { redo: true }, extensions);
  const reservations = CreditReservations.of(store);
  const a = await store.accounts.create({ name: 'bench', credits: 1e15 });
  await store.keys.create({
    hash: 'b'.repeat(64),
    accountId: a.id,
    name: 'k',
    label: 'l',
    limit: 1e15,
    limitReset: 'daily',
  });
  const cycle = async () => {
    const r = await reservations.reserve(a.id, 'b'.repeat(64), 300_000);
    if (!r.ok) throw new Error('refused');
    await reservations.settle(r.id, 20_000, null);
  };
  await time(500, cycle);
  const credit = await time(5000, cycle);
  // What a request waits for: the settlement is done once the main thread's ahead log has it (the worker runs it later).
  let refused: unknown = null;
  const loggedCycle = async () => {
    const r = await reservations.reserve(a.id, 'b'.repeat(64), 300_000);
    if (!r.ok) throw new Error('refused');
    await reservations.settleLogged(r.id, 20_000, null, null, [], (e) => (refused = e));
  };
  await time(500, loggedCycle);
  const logged = await time(5000, loggedCycle);
  await store.close();
  if (refused !== null) throw new Error(`a logged settlement was refused: ${String(refused)}`);
  return [
    `params plugin (validate + map), median per request: ${params.toFixed(1)} us (goal < 50)`,
    `credit reserve + settle on SQLite (WAL, redo log), median: ${credit.toFixed(1)} us (goal < 100)`,
    `credit reserve + settle as a request waits for it (answered from the ahead log), median: ${logged.toFixed(1)} us`,
  ];
}

if (require.main === module) {
  hotPath().then((lines) => process.stdout.write(`${lines.join('\n')}\n`));
}
