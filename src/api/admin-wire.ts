/**
 * The admin wire format of accounts and keys: their JSON (the admin API, the console, the OAuth key exchange and the
 * CLI print the same fields) and the readers of the admin bodies that create and change them. One definition, in the
 * core, because four parts share it (the auth and console plugins' routes, the oauth plugin and `gateway keys` /
 * `gateway accounts`).
 */
import { errors } from '../errors';
import { requireRole } from '../auth/roles';
import type { Principal } from '../pipeline/state';
import type { Store } from '../store/index';
import type { Account } from '../store/accounts';
import { limitRemaining, type ApiKey, type KeyRole, type LimitReset } from '../store/keys';
import { CreditsOutOfRange, MAX_CREDITS_TEXT, fromNano, nanoOrNull } from '../store/money';
import { bodies } from '../validation/generated/bodies';
import { bodyReader } from './body';

export function accountJson(a: Account) {
  return {
    id: a.id,
    name: a.name,
    email: a.email,
    credits: fromNano(a.credits),
    usage: fromNano(a.usage),
    custom_pricing: a.customPricing,
    created_at: new Date(a.createdAt).toISOString(),
  };
}

export function keyJson(k: ApiKey) {
  const remaining = limitRemaining(k);
  return {
    hash: k.hash,
    name: k.name,
    label: k.label,
    account_id: k.accountId,
    limit: k.limit === null ? null : fromNano(k.limit),
    limit_remaining: remaining === null ? null : fromNano(remaining),
    limit_reset: k.limitReset,
    usage: fromNano(k.usage),
    disabled: k.disabled,
    expires_at: k.expiresAt === null ? null : new Date(k.expiresAt).toISOString(),
    created_at: new Date(k.createdAt).toISOString(),
    updated_at: new Date(k.updatedAt).toISOString(),
    role: k.role ?? 'account',
  };
}

export const readAccount = bodyReader<{ name: string; email?: string; credits?: number; custom_pricing?: boolean }>(
  bodies.account,
);
export const readAmount = bodyReader<{ amount: number }>(bodies.amount);
export const readNewKey = bodyReader<{
  name: string;
  account_id: string;
  limit?: number | null;
  limit_reset?: LimitReset | null;
  expires_at?: string | null;
  role?: KeyRole | 'admin' | 'account' | null;
}>(bodies.newKey);
export const readKeyPatch = bodyReader<{
  name?: string;
  disabled?: boolean;
  limit?: number | null;
  limit_reset?: LimitReset | null;
  role?: KeyRole | 'admin' | 'account' | null;
}>(bodies.keyPatch);

/**
 * A body's `role` as a key stores it: undefined (not given), null (`account` or null: an ordinary key), or the role.
 * `admin` is no key's role: a 403 naming it for a caller below admin, a 400 for the admin (the admin key alone is).
 */
export function keyRoleOf(
  caller: Pick<Principal, 'isAdmin' | 'role'>,
  role: KeyRole | 'admin' | 'account' | null | undefined,
): KeyRole | null | undefined {
  if (role === 'admin') {
    requireRole(caller, 'admin');
    throw errors.invalidRequest(
      "No key can have the 'admin' role: the admin key alone is admin",
      'role',
      'invalid_value',
    );
  }
  // Giving a key a role needs at least that role: an operator mints operator or viewer keys, never more.
  if (role === 'operator' || role === 'viewer') requireRole(caller, role);
  return role === undefined ? undefined : role === 'account' ? null : role;
}

/**
 * Credits given as `field`, in nano-credits, held to what the ledger represents exactly (0, or -MAX_NANO when
 * `signed`, to MAX_NANO: src/store/money.ts); beyond it a 400 naming the field.
 */
export function money(credits: number, field: string, signed = false): number {
  const nano = nanoOrNull(credits, signed);
  if (nano === null)
    throw errors.invalidRequest(
      `${field} must be a number of credits from ${signed ? `-${MAX_CREDITS_TEXT}` : 0} to ${MAX_CREDITS_TEXT}`,
      field,
      'out_of_range',
    );
  return nano;
}

/**
 * Add `amount` credits (negative: remove) to an account: undefined when there is none; a 400 naming `amount` when the
 * account's credits would leave the ledger's range (nothing is written).
 */
export async function addCreditsChecked(store: Store, id: string, amount: number): Promise<Account | undefined> {
  try {
    return await store.accounts.addCredits(id, money(amount, 'amount', true));
  } catch (e) {
    if (e instanceof CreditsOutOfRange) throw errors.invalidRequest(`amount: ${e.message}`, 'amount', 'out_of_range');
    throw e;
  }
}
