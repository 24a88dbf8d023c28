import {
  accountJson,
  generateKey,
  hashKey,
  issueKey,
  keyJson,
  MAX_CREDITS_TEXT,
  nanoOrNull,
  type Store,
} from '../../src/plugin';

const META = 'admin_key_hash';

/** The least length and variety of a configured admin key (`openssl rand -hex 32` has 64 characters, ~16 distinct). */
export const ADMIN_KEY_MIN_LENGTH = 32;
export const ADMIN_KEY_MIN_DISTINCT = 10;

/**
 * Why a configured admin key is too weak to guard the admin API, or undefined when it is strong enough: shorter than
 * 32 characters, fewer than 10 distinct characters, one short pattern repeated (`abcabc...`), or mostly a run
 * (`abcdef...`, `aaaa...`, `123456...`). A random key (`openssl rand -hex 32`) passes; the generated one is never
 * checked.
 */
export function adminKeyWeakness(key: string): string | undefined {
  if (key.length < ADMIN_KEY_MIN_LENGTH)
    return `it has ${key.length} characters; it needs at least ${ADMIN_KEY_MIN_LENGTH}`;
  const distinct = new Set(key).size;
  if (distinct < ADMIN_KEY_MIN_DISTINCT)
    return `it has only ${distinct} different characters; it needs at least ${ADMIN_KEY_MIN_DISTINCT}`;
  if (/^([\s\S]{1,16}?)\1+$/.test(key)) return 'it is one short pattern repeated';
  let steps = 0;
  for (let i = 1; i < key.length; i++) if (Math.abs(key.charCodeAt(i) - key.charCodeAt(i - 1)) <= 1) steps++;
  if (steps * 2 > key.length - 1) return 'it is mostly a run of neighbouring characters (abcd..., 1234..., aaaa...)';
  return undefined;
}

/** Refuse a weak configured admin key at start, naming where it comes from and how to make a good one. */
export function checkAdminKey(key: string): void {
  const weakness = adminKeyWeakness(key);
  if (weakness === undefined) return;
  throw new Error(
    `The admin key (GATEWAY_ADMIN_KEY, or server.admin_key in the config) is too weak to guard the admin API: ` +
      `${weakness}. Make one with \`openssl rand -hex 32\` and set GATEWAY_ADMIN_KEY to it ` +
      `(or leave it unset: the first start then generates one and prints it once).`,
  );
}

/**
 * The admin key's hash: from GATEWAY_ADMIN_KEY / server.admin_key when set (refused when weak: checkAdminKey);
 * otherwise the stored hash of the key a first start generated, or, on a first start, a new key's hash with `persist`,
 * which stores only its hash, audits the generation (never the key nor its hash) and prints the key once to the
 * terminal (stderr; never the log). The caller runs `persist` once the gateway listens (addListeningHook): a first
 * start that fails before then has made nothing, and the retry generates and prints a key again.
 */
export async function adminKeyHash(
  store: Store,
  configured: string | undefined,
  print: (line: string) => void,
): Promise<{ hash: string; persist?: () => Promise<void> }> {
  if (configured) {
    checkAdminKey(configured);
    return { hash: hashKey(configured) };
  }
  const stored = await store.getMeta(META);
  if (stored) return { hash: stored };
  const key = generateKey();
  const hash = hashKey(key);
  const persist = async () => {
    await store.setMeta(META, hash);
    await store.audit.append({
      actor: 'admin',
      role: 'admin',
      source: 'startup',
      action: 'admin_key.generate',
      target: 'admin_key',
    });
    print(`Generated the admin key (shown once, store it now): ${key}\n`);
  };
  return { hash, persist };
}

/**
 * A first local start: when the store holds no account at all, create one with some
 * credit and a key, and print the key once, so that the README's curl works at once.
 * Only when the operator's config asks for it (the example gateway.yaml does). Both are audited (never the key).
 * Called once the gateway listens (addListeningHook), so a failed first start leaves no account whose key nobody saw.
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
  const { raw, key } = await issueKey(store.keys, { accountId: account.id, name: 'bootstrap' });
  const by = { actor: 'admin', role: 'admin', source: 'startup' } as const;
  await store.audit.append({ ...by, action: 'account.create', target: account.id, after: accountJson(account) });
  await store.audit.append({ ...by, action: 'key.create', target: key.hash, after: keyJson(key) });
  print(`Created account '${opts.account}' with ${opts.credits} credits and its first API key (shown once): ${raw}\n`);
}
