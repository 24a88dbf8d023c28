/**
 * @module
 * A purge's filter from the admin API's body or the CLI's flags, and how it is written in the audit log.
 */
import type { PurgeFilter } from './backends/types';

export interface PurgeBody {
  entry?: string;
  key_hash?: string;
  account_id?: string;
  model?: string;
  older_than_seconds?: number;
  all?: true;
}

/** The filter of a body (`all` alone: no field, every entry). */
export function purgeFilter(b: PurgeBody, now: number): PurgeFilter {
  return {
    ...(b.entry !== undefined ? { entry: b.entry } : {}),
    ...(b.key_hash !== undefined ? { keyHash: b.key_hash } : {}),
    ...(b.account_id !== undefined ? { accountId: b.account_id } : {}),
    ...(b.model !== undefined ? { model: b.model } : {}),
    ...(b.older_than_seconds !== undefined ? { olderThan: now - b.older_than_seconds * 1000 } : {}),
  };
}

/** A body that names no filter and not `all` purges nothing: refused, so a typo never empties the cache. */
export function purgesSomething(b: PurgeBody): boolean {
  return (
    b.all === true ||
    b.entry !== undefined ||
    b.key_hash !== undefined ||
    b.account_id !== undefined ||
    b.model !== undefined ||
    b.older_than_seconds !== undefined
  );
}
