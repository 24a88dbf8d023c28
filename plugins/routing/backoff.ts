import type { GatewayError } from '../../src/plugin';

/**
 * Wait before the n-th retry: exponential from baseMs with full jitter, capped at maxMs;
 * an upstream's Retry-After is honoured instead, up to retryAfterMaxMs.
 */
export function backoffMs(
  retry: number,
  last: GatewayError | undefined,
  b: { baseMs: number; maxMs: number; retryAfterMaxMs: number },
  random: () => number = Math.random,
): number {
  if (last?.retryAfter !== undefined) return Math.min(last.retryAfter * 1000, b.retryAfterMaxMs);
  const ceiling = Math.min(b.maxMs, b.baseMs * 2 ** (retry - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
