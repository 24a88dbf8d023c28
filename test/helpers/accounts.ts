import type { TestGateway } from './gateway';

/** A strong admin key (the auth plugin refuses one shorter than 32 characters or with too little variety). */
export const ADMIN_KEY = 'test-admin-key-9a822c8a8c6e928b1ccd4197';

export async function adminCall(
  gw: { url: string },
  method: string,
  path: string,
  body?: unknown,
  key = ADMIN_KEY,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(gw.url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

let made = 0;

/** An account with `credits` and a key on it (with an optional limit); returns the raw key and ids. */
export async function makeAccountKey(
  gw: TestGateway | { url: string },
  opts: { credits?: number; limit?: number | null; name?: string } = {},
): Promise<{ key: string; accountId: string; hash: string }> {
  // Account names are unique (issue 49): tests sharing one gateway get one account each unless they name theirs.
  const name = opts.name ?? `test-${(++made).toString(36)}-${Math.random().toString(36).slice(2, 6)}`;
  const a = await adminCall(gw, 'POST', '/v1/accounts', { name, credits: opts.credits ?? 100 });
  if (a.status !== 201) throw new Error(`account: ${a.status} ${JSON.stringify(a.body)}`);
  const accountId = (a.body.data as { id: string }).id;
  const k = await adminCall(gw, 'POST', '/v1/keys', {
    name: 'k',
    account_id: accountId,
    ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
  });
  if (k.status !== 201) throw new Error(`key: ${k.status} ${JSON.stringify(k.body)}`);
  return { key: k.body.key as string, accountId, hash: (k.body.data as { hash: string }).hash };
}
