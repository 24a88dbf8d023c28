/**
 * @module
 * Where entries live: the contract of the store and Redis backends.
 */
import type { PendingWrite } from '../../../src/plugin';

/** One entry as stored: the answer's text and who and what it is for (purges filter on these). */
export interface StoredEntry {
  key: string;
  accountId: string;
  keyHash: string | null;
  model: string;
  operation: string;
  text: string;
  createdAt: number;
  expiresAt: number;
}

/** What a purge deletes: entries matching every field given (`olderThan`: made before that time, ms). */
export interface PurgeFilter {
  entry?: string;
  keyHash?: string;
  accountId?: string;
  model?: string;
  olderThan?: number;
}

export interface CacheBackend {
  readonly kind: 'store' | 'redis';
  /** The entry's text, unless it is missing or expired at `now`. */
  get(key: string, now: number): Promise<string | undefined>;
  put(e: StoredEntry): Promise<void>;
  /** The store backend's put as a write for the request's settlement transaction (none for Redis). */
  putWrite?(e: StoredEntry): PendingWrite;
  /** Deletes the matching entries; how many. */
  purge(f: PurgeFilter): Promise<number>;
  /** Expired entries deleted (the store; Redis expires its own). */
  sweep?(now: number): Promise<number>;
  close(): Promise<void>;
}
