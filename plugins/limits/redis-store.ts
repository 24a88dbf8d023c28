import type Redis from 'ioredis';
import type { Logger } from 'pino';
import type { Admission, AdmitRequest, CounterStore, Dimension, ScopeLimits, ScopeUsage } from './counter-store';
import { ADMIT_LUA, FINISH_LUA } from './redis-scripts';

export interface RedisStoreOptions {
  url: string;
  prefix: string;
  windowMs: number;
  leaseMs: number;
  /**
   * A command not answered in this long, on a live connection, counts as Redis being unreachable (a lost connection
   * counts at once).
   */
  timeoutMs: number;
}

/** Thrown when Redis cannot answer; the plugin applies the operator's fail mode. */
export class CounterStoreDown extends Error {}

type AdmitReply = [number, number, number, number, Array<[number, number, number]>];
interface ScriptedRedis {
  limitsAdmit(...args: Array<string | number>): Promise<AdmitReply>;
  limitsFinish(...args: Array<string | number>): Promise<number>;
}

const DIMENSIONS: Record<number, Dimension> = { 1: 'requests', 2: 'tokens', 3: 'concurrency' };

/**
 * Counters in Redis, shared by every replica: one Lua script per admission (all scopes
 * checked and counted atomically) and one per finish. Commands fail fast while Redis is
 * away (no offline queue) and ioredis reconnects by itself; `up` tells which.
 */
export class RedisCounterStore implements CounterStore {
  readonly kind = 'redis';
  readonly client: Redis;
  private readonly scripted: ScriptedRedis;
  up = false;
  private closing = false;
  onChange?: (up: boolean) => void;

  constructor(
    private readonly opts: RedisStoreOptions,
    private readonly logger: Logger,
  ) {
    // ioredis is loaded only when a gateway counts in Redis (the default store is memory).
    const RedisClient = (require('ioredis') as typeof import('ioredis')).default;
    this.client = new RedisClient(opts.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: opts.timeoutMs,
      connectTimeout: Math.max(opts.timeoutMs, 1000),
      retryStrategy: (times) => Math.min(100 * times, 2000),
      lazyConnect: true,
    });
    this.client.defineCommand('limitsAdmit', { lua: ADMIT_LUA });
    this.client.defineCommand('limitsFinish', { lua: FINISH_LUA });
    this.scripted = this.client as unknown as ScriptedRedis;
    this.client.on('ready', () => this.mark(true));
    this.client.on('close', () => this.mark(false));
    this.client.on('error', () => this.mark(false));
  }

  /** Connect, waiting at most `waitMs`; an unreachable Redis is not fatal (the fail mode applies). */
  async connect(waitMs: number): Promise<void> {
    await Promise.race([
      this.client.connect().catch(() => undefined),
      new Promise((r) => setTimeout(r, waitMs).unref()),
    ]);
  }

  private mark(up: boolean): void {
    if (up === this.up || this.closing) return;
    this.up = up;
    if (up) this.logger.info('limits: Redis reachable, shared counters in use');
    else this.logger.warn('limits: Redis unreachable, applying the fail mode until it is back');
    this.onChange?.(up);
  }

  private keys(s: ScopeLimits, parts: readonly string[]): string[] {
    return parts.map((p) => `${this.opts.prefix}${s.id}:${p}`);
  }

  async admit(req: AdmitRequest): Promise<Admission> {
    if (!this.up) throw new CounterStoreDown('redis is not connected');
    const keys: string[] = [];
    const args: Array<string | number> = [req.id, req.tokens, req.windowMs ?? this.opts.windowMs, this.opts.leaseMs];
    for (const s of req.scopes) {
      keys.push(...this.keys(s, ['log', 'amt', 'tot', 'run']));
      args.push(s.rpm, s.tpm, s.concurrency);
    }
    let reply: AdmitReply;
    try {
      reply = await this.scripted.limitsAdmit(keys.length, ...keys, ...args);
    } catch (e) {
      if (this.client.status !== 'ready') this.mark(false);
      throw new CounterStoreDown((e as Error).message);
    }
    const [ok, scope, dim, retry, raw] = reply;
    const usage: ScopeUsage[] = raw.map(([requests, tokens, reset]) => ({
      requests,
      tokens,
      requestsResetMs: reset,
      tokensResetMs: reset,
    }));
    if (ok === 1) {
      for (const u of usage) {
        u.requests += 1;
        u.tokens += req.tokens;
        if (u.requests === 1) u.requestsResetMs = u.tokensResetMs = req.windowMs ?? this.opts.windowMs;
      }
      return { ok: true, usage };
    }
    return { ok: false, scope, dimension: DIMENSIONS[dim], retryAfterMs: retry, usage };
  }

  async finish(id: string, scopes: readonly ScopeLimits[], tokens: number): Promise<void> {
    const keys = scopes.flatMap((s) => this.keys(s, ['amt', 'tot', 'run']));
    try {
      await this.scripted.limitsFinish(keys.length, ...keys, id, tokens);
    } catch (e) {
      // The slot's lease and the window expire by themselves; nothing is left held for ever.
      this.logger.warn({ err: (e as Error).message }, 'limits: could not settle a request in Redis');
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    this.client.disconnect();
  }
}
