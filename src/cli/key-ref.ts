import { hashKey, KEY_PREFIX } from '../auth/key-format';
import type { ApiKey } from '../store/keys';
import type { Store } from '../store/index';

/**
 * A key by what a person has at hand: its hash (as `keys list` shows it), the start of its hash (6 characters or
 * more), its name, its label (`sk-gw-...abcd`) or the key itself (hashed here, never stored or printed). A name, label
 * or hash start that several keys share is refused with their hashes. Otherwise an error message.
 */
export async function findKey(store: Store, ref: string): Promise<ApiKey | string> {
  if (ref.startsWith(KEY_PREFIX) && !ref.includes('...')) {
    const k = await store.keys.get(hashKey(ref));
    return k ?? 'no key matches that secret (was it deleted?)';
  }
  if (/^[0-9a-f]{64}$/.test(ref)) return (await store.keys.get(ref)) ?? `no key with the hash ${ref}`;
  const byPrefix = /^[0-9a-f]{6,63}$/.test(ref) ? await hashes(store, 'hash LIKE ?', `${ref}%`) : [];
  const rows = byPrefix.length > 0 ? byPrefix : await hashes(store, 'name = ? OR label = ?', ref, ref);
  if (rows.length === 1) return (await store.keys.get(rows[0])) as ApiKey;
  if (rows.length > 1)
    return `several keys match '${ref.slice(0, 64)}' (${rows.map((h) => h.slice(0, 12)).join(', ')}); give more of the hash`;
  return `no key with the hash, name or label '${ref.slice(0, 64)}' (see 'gateway keys list')`;
}

async function hashes(store: Store, where: string, ...params: string[]): Promise<string[]> {
  const rows = await store.db.all<{ hash: string }>(
    `SELECT hash FROM api_keys WHERE ${where} ORDER BY created_at LIMIT 6`,
    params,
  );
  return rows.map((r) => r.hash);
}
