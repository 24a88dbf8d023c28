/**
 * The contract between the limits plugin and where its counters live (this process, or
 * Redis for every replica). One call admits a request against every scope that applies
 * to it, atomically: either every scope counts it, or none does.
 */

/** Limits of one scope (a key, an account, a model, a key x model); 0 = no limit on that dimension. */
export interface ScopeLimits {
  /** Stable id, also the counter's name: `k:<hash>`, `a:<account>`, `m:<model>`, `km:<hash>:<model>`. */
  id: string;
  rpm: number;
  tpm: number;
  concurrency: number;
}

/** Where a scope stands after an admission (or at the refusal). */
export interface ScopeUsage {
  /** Requests in the trailing window, this one included when admitted. */
  requests: number;
  /** Tokens in the trailing window (reservations and settled counts). */
  tokens: number;
  /** Ms until the oldest request in the window leaves it (0 when the window is empty). */
  requestsResetMs: number;
  /** Ms until the oldest token entry leaves it. */
  tokensResetMs: number;
}

export type Dimension = 'requests' | 'tokens' | 'concurrency';

export type Admission =
  | { ok: true; usage: ScopeUsage[] }
  | { ok: false; scope: number; dimension: Dimension; retryAfterMs: number; usage: ScopeUsage[] };

export interface AdmitRequest {
  /** Unique per request (its request id is not unique enough: clients may send one). */
  id: string;
  /** Tokens to reserve (the request's bound). */
  tokens: number;
  scopes: readonly ScopeLimits[];
  /** A window other than the store's own (the failed-authentication count uses its own). */
  windowMs?: number;
}

export interface CounterStore {
  readonly kind: 'memory' | 'redis';
  admit(req: AdmitRequest): Promise<Admission>;
  /** The same as admit without a promise, where the counters are in this process (the memory store); absent else. */
  admitSync?(req: AdmitRequest): Admission;
  /** The request ended: release its concurrency slot and settle its reserved tokens to `tokens`. */
  finish(id: string, scopes: readonly ScopeLimits[], tokens: number): Promise<void>;
  /** The request is not to count at all (a response-cache hit): its admission undone, as if never made. */
  release(id: string, scopes: readonly ScopeLimits[]): Promise<void>;
  close(): Promise<void>;
}

/** Ms until `tokens` more fit under `limit`, given the window's entries oldest first (ts, amount). */
export function tokensRetryMs(
  entries: Iterable<[number, number]>,
  used: number,
  tokens: number,
  limit: number,
  now: number,
  windowMs: number,
): number {
  if (tokens > limit) return windowMs;
  let over = used + tokens - limit;
  let seen = 0;
  for (const [ts, amount] of entries) {
    if (++seen > 1000) break; // as the Redis script: a bounded walk, past it the whole window
    over -= amount;
    if (over <= 0) return Math.max(1, ts + windowMs - now);
  }
  return windowMs;
}
