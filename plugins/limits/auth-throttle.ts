import { errors, randomId, type AuthThrottle } from '../../src/plugin';
import type { RedisCounterStore } from './redis-store';
import type { LimitsConfig } from './schema';

/**
 * Failed authentications per client address in a trailing window: past `max`, every
 * attempt from that address gets 429 with Retry-After until old failures leave the window,
 * so keys cannot be guessed at line rate. Counted in this replica; with `shared` (Redis)
 * each failure is also counted for all replicas, and an address over the shared limit is
 * blocked on a replica from its next failure there (at most max + replicas in a window).
 */
export class FailedAuthThrottle implements AuthThrottle {
  private readonly failures = new Map<string, number[]>();
  /** Addresses the shared count (every replica's failures) put over the limit, until when. */
  private readonly blocked = new Map<string, number>();
  private readonly sweeper: NodeJS.Timeout;
  /** Counts a failure for every replica; resolves the ms to wait when the address is over the limit. */
  shared?: (address: string) => Promise<number | undefined>;

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.sweeper = setInterval(() => this.sweep(), windowMs);
    this.sweeper.unref();
  }

  private recent(address: string, now: number): number[] {
    const list = this.failures.get(address);
    if (!list) return [];
    while (list.length > 0 && list[0] <= now - this.windowMs) list.shift();
    if (list.length === 0) this.failures.delete(address);
    return list;
  }

  check(address: string): void {
    const now = this.now();
    const list = this.recent(address, now);
    const until = Math.max(
      list.length >= this.max ? list[list.length - this.max] + this.windowMs : 0,
      this.blocked.get(address) ?? 0,
    );
    if (until > now) {
      const retry = Math.max(1, Math.ceil((until - now) / 1000));
      throw errors.rateLimited(
        'too_many_failed_authentications',
        `Too many failed authentications from this address; retry in ${retry} s`,
        retry,
      );
    }
  }

  failed(address: string): void {
    const now = this.now();
    const list = this.recent(address, now);
    list.push(now);
    if (list.length > this.max) list.splice(0, list.length - this.max);
    if (!this.failures.has(address)) {
      if (this.failures.size >= 100_000) this.failures.clear();
      this.failures.set(address, list);
    }
    this.shared?.(address).then(
      (retryMs) => {
        if (retryMs === undefined) return;
        if (this.blocked.size >= 100_000) this.blocked.clear();
        this.blocked.set(address, this.now() + retryMs);
      },
      () => undefined,
    );
  }

  private sweep(): void {
    const now = this.now();
    for (const a of [...this.failures.keys()]) this.recent(a, now);
    for (const [a, until] of this.blocked) if (until <= now) this.blocked.delete(a);
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}

/**
 * The throttle the config asks for (none when `max` is 0); with Redis, each failure also counts for every replica.
 */
export function failedAuthThrottle(
  { max, window_ms: windowMs }: LimitsConfig['auth_failures'],
  redis: RedisCounterStore | undefined,
): FailedAuthThrottle | undefined {
  if (max <= 0) return undefined;
  const throttle = new FailedAuthThrottle(max, windowMs);
  if (redis) {
    throttle.shared = async (address) => {
      const a = await redis.admit({
        id: randomId('fail_'),
        tokens: 0,
        windowMs,
        scopes: [{ id: `f:${address}`, rpm: max, tpm: 0, concurrency: 0 }],
      });
      return a.ok ? undefined : a.retryAfterMs;
    };
  }
  return throttle;
}
