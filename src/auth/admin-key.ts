import type { Store } from '../store/index';
import { generateKey, hashKey } from './key-format';

const META = 'admin_key_hash';

/**
 * The admin key's hash: from GATEWAY_ADMIN_KEY / server.admin_key when set; otherwise the
 * first start generates a key, prints it once to stdout (never to the log) and stores
 * only its hash, which later starts reuse.
 */
export async function adminKeyHash(store: Store, configured: string | undefined, print: (line: string) => void): Promise<string> {
  if (configured) return hashKey(configured);
  const stored = await store.getMeta(META);
  if (stored) return stored;
  const key = generateKey();
  const hash = hashKey(key);
  await store.setMeta(META, hash);
  print(`Generated the admin key (shown once, store it now): ${key}\n`);
  return hash;
}
