import { errors, type GatewayError } from '../errors';
import type { Principal, Role } from '../pipeline/state';

/**
 * Who may do what. Every admin and console route names the least role it needs:
 * - `admin`: everything, the admin key and the single sign-on settings included;
 * - `operator`: accounts, keys, credit and limits (not the admin key, not SSO settings);
 * - `viewer`: read-only analytics of every account (usage, activity, records, the audit log);
 * - `account`: its own account's data only (every API key of an account, a console session opened with one).
 */
export const ROLES: readonly Role[] = ['account', 'viewer', 'operator', 'admin'];

const RANK: Record<Role, number> = { account: 0, viewer: 1, operator: 2, admin: 3 };

/** The principal's role: as set, else `admin` for the admin key and `account` for any other. */
export function roleOf(p: Pick<Principal, 'isAdmin' | 'role'>): Role {
  return p.role ?? (p.isAdmin ? 'admin' : 'account');
}

/** Whether the principal has at least `least` (admin > operator > viewer > account). */
export function hasRole(p: Pick<Principal, 'isAdmin' | 'role'>, least: Role): boolean {
  return RANK[roleOf(p)] >= RANK[least];
}

/** The 403 for a principal without `least`, naming the role the route needs and the one the caller has. */
export function roleRequired(p: Pick<Principal, 'isAdmin' | 'role'>, least: Role): GatewayError {
  return errors.forbidden('role_required', `This needs the '${least}' role; the caller has '${roleOf(p)}'`);
}

/** Throws roleRequired unless the principal has at least `least`. */
export function requireRole(p: Pick<Principal, 'isAdmin' | 'role'>, least: Role): void {
  if (!hasRole(p, least)) throw roleRequired(p, least);
}

/** A role name from outside (SSO claims, the admin API), or undefined when it is none of the four. */
export function parseRole(v: unknown): Role | undefined {
  return typeof v === 'string' && Object.hasOwn(RANK, v) ? (v as Role) : undefined;
}
