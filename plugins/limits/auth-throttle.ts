import { errors } from '../../src/errors';
import type { AuthThrottle } from '../../src/auth/contract';

/**
 * Failed authentications per client address in a trailing window (per replica): past
 * `max`, every attempt from that address gets 429 with Retry-After until old failures
 * leave the window, so keys cannot be guessed at line rate.
 */
export class FailedAuthThrottle implements AuthThrottle {
  private readonly failures = new Map<string, number[]>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly max: number, private readonly windowMs: number, private readonly now: () => number = Date.now) {
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
    if (list.length >= this.max) {
      const retry = Math.max(1, Math.ceil((list[list.length - this.max] + this.windowMs - now) / 1000));
      throw errors.rateLimited('too_many_failed_authentications', `Too many failed authentications from this address; retry in ${retry} s`, retry);
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
  }

  private sweep(): void {
    const now = this.now();
    for (const a of [...this.failures.keys()]) this.recent(a, now);
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}
