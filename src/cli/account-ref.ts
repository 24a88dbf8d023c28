import type { Account } from '../store/accounts';
import type { Store } from '../store/index';

/** An account by id, or by name when exactly one account has that name; otherwise an error message. */
export async function findAccount(store: Store, ref: string): Promise<Account | string> {
  const byId = await store.accounts.get(ref);
  if (byId) return byId;
  const rows = await store.db.all<{ id: string }>(
    'SELECT id FROM accounts WHERE name = ? ORDER BY created_at LIMIT 5',
    [ref],
  );
  if (rows.length === 1) return (await store.accounts.get(rows[0].id)) as Account;
  if (rows.length > 1) return `several accounts are named '${ref}' (${rows.map((r) => r.id).join(', ')}); give the id`;
  return `no account with the id or name '${ref}' (see 'gateway accounts list')`;
}
