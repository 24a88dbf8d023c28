import type Redis from 'ioredis';
import type { RedisOptions } from 'ioredis';

/**
 * An ioredis client for a plugin that keeps state in Redis (the limits' counters, the cache's entries), failing fast:
 * no offline queue and no retried command, so a Redis that is away costs a request one `timeoutMs`, never a hang;
 * reconnection with a capped backoff; not connected until `connect()` (the plugin decides how long start-up waits).
 * `more` adds or overrides options. ioredis is loaded only when a plugin asks for a client.
 */
export function failFastRedis(url: string, timeoutMs: number, more: RedisOptions = {}): Redis {
  const RedisClient = (require('ioredis') as typeof import('ioredis')).default;
  return new RedisClient(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: timeoutMs,
    connectTimeout: Math.max(timeoutMs, 1000),
    retryStrategy: (times) => Math.min(100 * times, 2000),
    lazyConnect: true,
    ...more,
  });
}
