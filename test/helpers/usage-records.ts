import type { Store } from '../../src/store/index';
import { GENERATION_INSERT, generationParams, type Generation } from '../../src/store/generations';
import { DAY_MS } from '../../plugins/console/usage';

/** Deterministic pseudo-random records spread over `days` days before `now`. */
export function makeRecords(n: number, now: number, days: number, seed = 7): Generation[] {
  let s = seed;
  const rnd = (k: number) => ((s = (s * 1103515245 + 12345) % 2147483648), Math.floor((s / 2147483648) * k));
  const out: Generation[] = [];
  for (let i = 0; i < n; i++) {
    out.push({
      id: `chatcmpl-t${seed}-${i}`,
      accountId: `acct_${rnd(3)}`,
      keyHash: rnd(5) === 0 ? null : `k${rnd(4)}`,
      model: `m/${rnd(3)}`,
      provider: 'mock',
      deployment: `mock/d${rnd(2)}`,
      promptTokens: rnd(100),
      completionTokens: rnd(50),
      cachedTokens: 0,
      cacheWriteTokens: 0,
      reasoningTokens: rnd(3),
      cost: rnd(10_000),
      latencyMs: rnd(500),
      ttftMs: null,
      finishReason: 'stop',
      streamed: false,
      cancelled: false,
      status: rnd(10) === 0 ? 'error' : 'completed',
      errorCode: null,
      appReferer: rnd(2) ? `https://app${rnd(3)}.example` : null,
      appTitle: null,
      user: null,
      metadata: null,
      createdAt: now - rnd(days * DAY_MS),
    });
  }
  return out;
}

export async function insertRecords(store: Store, rows: Generation[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 500) {
    await store.db.tx(async (t) => {
      for (const g of rows.slice(i, i + 500)) await t.run(GENERATION_INSERT, generationParams(g));
    });
  }
}

/**
 * Record `i` of `n`, a large deterministic spread (the console at 1,000,000 records, the write-cost bench): 60 keys of
 * 3 accounts, each key used by one app, 8 models on 2 deployments, each outcome; in the order of time, as a gateway
 * writes them (an index on the time then grows at its end), the first two thirds over the 29 days before the last
 * day before `now`, the last third within that day.
 */
export function spreadRecord(i: number, n: number, now: number): Generation {
  const h = (i * 2654435761) >>> 0;
  const key = h % 60;
  const recent = Math.floor(n / 3);
  const older = n - recent;
  const createdAt =
    i < older
      ? now - 30 * DAY_MS + Math.floor((i * 29 * DAY_MS) / older)
      : now - DAY_MS + Math.floor(((i - older) * (DAY_MS - 1)) / recent);
  const kind = h % 100;
  return {
    id: `gen-m-${i}`,
    accountId: `acct_m${key % 3}`,
    keyHash: `key-m-${key}`,
    model: `vendor/model-${(h >>> 8) % 8}`,
    provider: 'p',
    deployment: `p/d${(h >>> 4) % 2}`,
    promptTokens: h % 2000,
    completionTokens: (h >>> 3) % 800,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    cost: h % 100_000,
    latencyMs: (h >>> 5) % 3000,
    ttftMs: null,
    finishReason: 'stop',
    streamed: kind % 2 === 0,
    cancelled: kind === 1,
    status: kind < 3 ? 'error' : kind === 3 || kind === 1 ? 'incomplete' : 'completed',
    errorCode: kind === 0 ? 'upstream_error' : kind === 2 ? 'invalid_api_key' : kind === 3 ? 'upstream_timeout' : null,
    httpStatus: kind === 2 ? 401 : null,
    appReferer: `https://app${key % 10}.example`,
    appTitle: null,
    user: null,
    metadata: null,
    createdAt,
  };
}
