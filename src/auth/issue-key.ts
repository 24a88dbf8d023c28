import type { Store } from '../store/index';
import type { ApiKey } from '../store/keys';
import { generateKey, hashKey, keyLabel } from './key-format';

/** What a new key is created with, beside its hash and label (issueKey derives them from the raw key). */
export type NewKeyFields = Omit<Parameters<Store['keys']['create']>[0], 'hash' | 'label'>;

/** Create a key: a fresh raw key, stored only as its hash and label. The raw key is returned, to be shown once. */
export async function issueKey(keys: Store['keys'], fields: NewKeyFields): Promise<{ raw: string; key: ApiKey }> {
  const raw = generateKey();
  const key = await keys.create({ ...fields, hash: hashKey(raw), label: keyLabel(raw) });
  return { raw, key };
}
