import type { Store } from '../store/index';

/** A counter's value in its current window and when that window ends (epoch ms). */
export interface CounterValue {
  value: number;
  resetAt: number;
}

/**
 * State a plugin shares with itself on every replica: fixed-window counters and values
 * with a time to live. Backed by the store (SQLite or PostgreSQL, atomic upserts) or by
 * Redis (`shared_state: {driver: redis, url}`, atomic scripts). Each plugin sees its own
 * key space (keys are prefixed with the plugin's name).
 */
export interface SharedState {
  readonly backend: 'store' | 'redis';
  /** Add `by` (may be negative) to `key` in the current window of `windowMs`; the value after it. */
  increment(key: string, by: number, windowMs: number): Promise<CounterValue>;
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  delete(key: string): Promise<void>;
}

/** The part every backend implements; scoping and window arithmetic are shared. */
export interface StateBackend {
  readonly backend: SharedState['backend'];
  /** Atomically add to a counter that expires at `expiresAt`; returns the new value. */
  add(key: string, by: number, expiresAt: number): Promise<number>;
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string, expiresAt: number | null): Promise<void>;
  delete(key: string): Promise<void>;
  close(): Promise<void>;
}

/** One plugin's view: its keys prefixed, counters in fixed windows aligned to the epoch. */
export function scopedState(backend: StateBackend, plugin: string): SharedState {
  const k = (key: string) => `${plugin}:${key}`;
  return {
    backend: backend.backend,
    async increment(key, by, windowMs) {
      if (!Number.isSafeInteger(by) || !Number.isSafeInteger(windowMs) || windowMs <= 0) {
        throw new TypeError('increment takes an integer amount and a positive integer window (ms)');
      }
      const start = Math.floor(Date.now() / windowMs) * windowMs;
      const resetAt = start + windowMs;
      return { value: await backend.add(`${k(key)}@${start}`, by, resetAt), resetAt };
    },
    get: (key) => backend.get(k(key)),
    set: (key, value, ttlMs) => backend.set(k(key), value, ttlMs === undefined ? null : Date.now() + ttlMs),
    delete: (key) => backend.delete(k(key)),
  };
}

/** Counters and values in the store's `plugin_state` table; expired rows are swept every minute. */
export function storeBackend(store: Store): StateBackend {
  const db = store.db;
  const live = '(expires_at IS NULL OR expires_at > ?)';
  // The sweep starts with the first write: a gateway whose plugins keep no state never runs it.
  let sweep: NodeJS.Timeout | undefined;
  const sweeping = () => {
    if (sweep) return;
    sweep = setInterval(
      () => void db.run('DELETE FROM plugin_state WHERE expires_at <= ?', [Date.now()]).catch(() => undefined),
      60_000,
    );
    sweep.unref();
  };
  return {
    backend: 'store',
    async add(key, by, expiresAt) {
      sweeping();
      const row = await db.get<{ counter: number | string }>(
        'INSERT INTO plugin_state (key, counter, expires_at) VALUES (?, ?, ?) ' +
          'ON CONFLICT (key) DO UPDATE SET counter = plugin_state.counter + excluded.counter RETURNING counter',
        [key, by, expiresAt],
      );
      return Number(row?.counter ?? by);
    },
    async get(key) {
      const row = await db.get<{ value: string | null }>(`SELECT value FROM plugin_state WHERE key = ? AND ${live}`, [
        key,
        Date.now(),
      ]);
      return row?.value ?? undefined;
    },
    async set(key, value, expiresAt) {
      sweeping();
      await db.run(
        'INSERT INTO plugin_state (key, value, expires_at) VALUES (?, ?, ?) ' +
          'ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at',
        [key, value, expiresAt],
      );
    },
    async delete(key) {
      await db.run('DELETE FROM plugin_state WHERE key = ?', [key]);
    },
    async close() {
      if (sweep) clearInterval(sweep);
    },
  };
}

const ADD_SCRIPT = `
local v = redis.call('INCRBY', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIREAT', KEYS[1], ARGV[2]) end
return v`;

/** Counters and values in Redis (ioredis, loaded only when configured); one script per increment. */
export function redisBackend(url: string, prefix: string): StateBackend {
  const Redis = (require('ioredis') as typeof import('ioredis')).default;
  const redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 1, enableOfflineQueue: false });
  redis.on('error', () => undefined); // reconnects by itself; callers see the failed command
  const k = (key: string) => `${prefix}${key}`;
  return {
    backend: 'redis',
    async add(key, by, expiresAt) {
      return Number(await redis.eval(ADD_SCRIPT, 1, k(key), by, expiresAt));
    },
    async get(key) {
      return (await redis.get(k(key))) ?? undefined;
    },
    async set(key, value, expiresAt) {
      if (expiresAt === null) await redis.set(k(key), value);
      else await redis.set(k(key), value, 'PXAT', expiresAt);
    },
    async delete(key) {
      await redis.del(k(key));
    },
    async close() {
      redis.disconnect();
    },
  };
}
