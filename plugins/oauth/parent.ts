/**
 * @module
 * Keys never outgrow their parent. The key a consent's code is exchanged for is made from the key that approved it:
 * at most the parent's remaining credit limit (and the consent's own limit if lower), its allowlist and rate limits
 * no looser than the parent's (the limits plugin's `limits.inherit`, when it is in the chain), expiring with it, and
 * recorded as its child (`parent_hash`): the auth plugin refuses a key whose parent is disabled, deleted or expired.
 */
import { errors, issueKey, limitRemaining, type ApiKey, type SharedServices, type Store } from '../../src/plugin';
import type { OAuthCode } from './store/repo';

/** The lower of two credit limits (null: none). */
const lower = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.min(a, b));

/** A new key of the approving account, within its parent; a parent no longer valid makes no key (403 invalid_code). */
export async function mintChildKey(
  store: Store,
  shared: SharedServices,
  c: OAuthCode,
  now = Date.now(),
): Promise<{ raw: string; key: ApiKey }> {
  const parent = c.parentHash === null ? undefined : await store.keys.get(c.parentHash);
  if (
    !parent ||
    parent.disabled ||
    parent.accountId !== c.accountId ||
    (parent.expiresAt !== null && parent.expiresAt <= now)
  )
    throw errors.forbidden('invalid_code', 'The key that approved this code is no longer valid');
  const { raw, key } = await issueKey(store.keys, {
    accountId: c.accountId,
    name: c.site,
    limit: lower(c.limit, limitRemaining(parent, now)),
    expiresAt: parent.expiresAt,
    parentHash: parent.hash,
  });
  const inherit = shared.get('limits.inherit');
  try {
    if (inherit) await inherit({ hash: parent.hash, accountId: parent.accountId }, key.hash);
  } catch (e) {
    // No key without its governance: the raw key has not been shown to anyone.
    await store.keys.delete(key.hash);
    throw e;
  }
  return { raw, key };
}
