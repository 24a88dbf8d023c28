import { generateKey, hashKey, issueKey, MAX_CREDITS_TEXT, nanoOrNull, type Store } from '../../src/plugin';

const META = 'admin_key_hash';

/**
 * The admin key's hash: from GATEWAY_ADMIN_KEY / server.admin_key when set; otherwise the
 * first start generates a key, prints it once to the terminal (stderr; never the log) and stores
 * only its hash, which later starts reuse.
 */
export async function adminKeyHash(
  store: Store,
  configured: string | undefined,
  print: (line: string) => void,
): Promise<string> {
  if (configured) return hashKey(configured);
  const stored = await store.getMeta(META);
  if (stored) return stored;
  const key = generateKey();
  const hash = hashKey(key);
  await store.setMeta(META, hash);
  print(`Generated the admin key (shown once, store it now): ${key}\n`);
  return hash;
}

/**
 * A first local start: when the store holds no account at all, create one with some
 * credit and a key, and print the key once, so that the README's curl works at once.
 * Only when the operator's config asks for it (the example gateway.yaml does).
 */
export async function bootstrapAccount(
  store: Store,
  opts: { account: string; credits: number },
  print: (line: string) => void,
): Promise<void> {
  if ((await store.accounts.list(1, 0)).length > 0) return;
  const credits = nanoOrNull(opts.credits);
  if (credits === null) throw new Error(`auth.bootstrap.credits must be from 0 to ${MAX_CREDITS_TEXT} credits`);
  const account = await store.accounts.create({ name: opts.account, credits });
  const { raw } = await issueKey(store.keys, { accountId: account.id, name: 'bootstrap' });
  print(`Created account '${opts.account}' with ${opts.credits} credits and its first API key (shown once): ${raw}\n`);
}
