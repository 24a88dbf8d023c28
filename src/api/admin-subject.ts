import { errors } from '../errors';
import type { Store } from '../store/index';

/** What a per-key or per-account admin route is about (`/v1/keys/{hash}/...`, `/v1/accounts/{id}/...`). */
export type AdminSubject = 'key' | 'account';

/**
 * The key's hash or the account's id of such a route, once it names one that exists; else 404 `key_not_found` or
 * `account_not_found`. A key is looked up only by its full hash (64 hex characters): anything else is not one.
 */
export async function existingSubject(store: Store, subject: AdminSubject, id: string): Promise<string> {
  if (subject === 'key') {
    if (/^[0-9a-f]{64}$/.test(id) && (await store.keys.get(id)) !== undefined) return id;
    throw errors.notFound('key_not_found', 'No key with that hash');
  }
  if ((await store.accounts.get(id)) !== undefined) return id;
  throw errors.notFound('account_not_found', 'No account with that id');
}
