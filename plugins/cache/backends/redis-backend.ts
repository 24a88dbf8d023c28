/**
 * @module
 * Entries in Redis, shared by every replica that names the same Redis and prefix: one hash per entry (the answer and
 * who and what it is for), expired by Redis itself. A purge walks the entries with SCAN (an operator's action, not a
 * request's).
 */
import type Redis from 'ioredis';
import { failFastRedis } from '../../../src/plugin';
import type { CacheBackend, PurgeFilter, StoredEntry } from './types';

export interface RedisBackendOptions {
  url: string;
  prefix: string;
  timeoutMs: number;
}

export class RedisBackend implements CacheBackend {
  readonly kind = 'redis' as const;
  private readonly client: Redis;

  constructor(private readonly opts: RedisBackendOptions) {
    this.client = failFastRedis(opts.url, opts.timeoutMs);
    // A Redis away is a miss (the answer comes from upstream), never a failed request: errors are the callers'.
    this.client.on('error', () => undefined);
  }

  async connect(waitMs: number): Promise<void> {
    await Promise.race([
      this.client.connect().catch(() => undefined),
      new Promise((r) => setTimeout(r, waitMs).unref()),
    ]);
  }

  private name(key: string): string {
    return `${this.opts.prefix}e:${key}`;
  }

  async get(key: string, now: number): Promise<string | undefined> {
    const [body, expires] = await this.client.hmget(this.name(key), 'body', 'expires_at');
    return body !== null && Number(expires) > now ? body : undefined;
  }

  async put(e: StoredEntry): Promise<void> {
    const name = this.name(e.key);
    await this.client
      .multi()
      .hset(name, {
        body: e.text,
        account_id: e.accountId,
        key_hash: e.keyHash ?? '',
        model: e.model,
        operation: e.operation,
        created_at: String(e.createdAt),
        expires_at: String(e.expiresAt),
      })
      .pexpireat(name, e.expiresAt)
      .exec();
  }

  async purge(f: PurgeFilter): Promise<number> {
    if (f.entry !== undefined) {
      const meta = await this.client.hmget(this.name(f.entry), 'account_id', 'key_hash', 'model', 'created_at');
      return meta[0] !== null && matches(f, meta) ? await this.client.del(this.name(f.entry)) : 0;
    }
    let cursor = '0';
    let deleted = 0;
    do {
      const [next, names] = await this.client.scan(cursor, 'MATCH', `${this.opts.prefix}e:*`, 'COUNT', 500);
      cursor = next;
      for (const name of names) {
        const meta = await this.client.hmget(name, 'account_id', 'key_hash', 'model', 'created_at');
        if (meta[0] !== null && matches(f, meta)) deleted += await this.client.del(name);
      }
    } while (cursor !== '0');
    return deleted;
  }

  async close(): Promise<void> {
    this.client.disconnect();
  }
}

function matches(f: PurgeFilter, [account, keyHash, model, created]: Array<string | null>): boolean {
  return (
    (f.accountId === undefined || f.accountId === account) &&
    (f.keyHash === undefined || f.keyHash === keyHash) &&
    (f.model === undefined || f.model === model) &&
    (f.olderThan === undefined || Number(created) < f.olderThan)
  );
}
