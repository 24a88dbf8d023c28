/**
 * @module
 * Which counters the limits plugin counts in (memory-store.ts or redis-store.ts), and how it admits through them:
 * with Redis away, the fail mode (`open`: this replica's own counters; `closed`: 429 limits_unavailable).
 */
import type { Logger } from 'pino';
import { errors } from '../../src/plugin';
import type { Admission, CounterStore, ScopeLimits } from './counter-store';
import { MemoryCounterStore } from './memory-store';
import { CounterStoreDown, RedisCounterStore } from './redis-store';
import type { LimitsMetrics } from './metrics';
import { refusal, scopeKind } from './refusal';
import type { LimitsConfig } from './schema';

/** The store's counters, and the Redis store when that is the one (for readiness and the shared auth throttle). */
export async function openCounters(
  config: Readonly<LimitsConfig>,
  leaseMs: number,
  storeUp: LimitsMetrics['storeUp'],
  logger: Logger,
): Promise<{ counters: CounterStore; redis?: RedisCounterStore }> {
  if (config.store !== 'redis') {
    storeUp.set(1);
    return { counters: new MemoryCounterStore(config.window_ms, leaseMs) };
  }
  const redis = new RedisCounterStore(
    {
      url: config.redis.url,
      prefix: config.redis.prefix,
      windowMs: config.window_ms,
      leaseMs,
      timeoutMs: config.redis.timeout_ms,
    },
    logger,
  );
  redis.onChange = (up) => storeUp.set(up ? 1 : 0);
  storeUp.set(0);
  await redis.connect(2000);
  return { counters: redis, redis };
}

/** An admission and the counters that made it (they are told when the request ends). */
export interface Admitted {
  admission: Admission;
  by: CounterStore;
}

/** Admits a request's (or an attempt's) scopes, and words and counts a refusal. Made once at setup. */
export class Admitter {
  /** Fail-open with Redis away: this replica's own counters, so each replica still holds the limits by itself. */
  readonly local: MemoryCounterStore | undefined;

  constructor(
    private readonly counters: CounterStore,
    redis: RedisCounterStore | undefined,
    private readonly config: Readonly<LimitsConfig>,
    leaseMs: number,
    private readonly metrics: LimitsMetrics,
  ) {
    this.local = redis && config.fail_mode === 'open' ? new MemoryCounterStore(config.window_ms, leaseMs) : undefined;
  }

  async admit(id: string, tokens: number, scopes: ScopeLimits[]): Promise<Admitted> {
    try {
      return { admission: await this.counters.admit({ id, tokens, scopes }), by: this.counters };
    } catch (e) {
      if (!(e instanceof CounterStoreDown)) throw e;
      this.metrics.failModeUsed.inc({ mode: this.config.fail_mode });
      if (!this.local)
        throw errors.rateLimited('limits_unavailable', 'Rate limits cannot be checked right now; retry shortly', 2);
      return { admission: this.local.admitSync({ id, tokens, scopes }), by: this.local };
    }
  }

  /** Admit with the counters of this process, else the store's (the fail mode when it is away). */
  now(id: string, tokens: number, scopes: ScopeLimits[]): Admitted | Promise<Admitted> {
    return this.counters.admitSync
      ? { admission: this.counters.admitSync({ id, tokens, scopes }), by: this.counters }
      : this.admit(id, tokens, scopes);
  }

  /** The 429 for a refused admission, counted by the scope's kind and the dimension that refused. */
  refused(admission: Extract<Admission, { ok: false }>, scopes: ScopeLimits[], tokens: number) {
    const scope = scopes[admission.scope];
    this.metrics.refusals.inc({ scope: scopeKind(scope), dimension: admission.dimension });
    return refusal(admission, scope, tokens);
  }
}
