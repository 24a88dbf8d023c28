import type Koa from 'koa';
import type { Principal } from '../pipeline/state';
import type { AuditSource } from '../store/audit';
import type { Store } from '../store/index';
import { roleOf } from './roles';

/** One change, as a route describes it (who, in what role and from where come from the principal and the request). */
export interface AuditChange {
  /** Dotted verb: `account.create`, `key.update`, `credits.add`, `limits.set`, `session.revoke`, ... */
  action: string;
  /** What was changed: an account id, a key hash, a session id. */
  target?: string | null;
  /** The thing before and after the change (wire JSON; secrets are redacted on the way in, src/store/audit.ts). */
  before?: unknown;
  after?: unknown;
  /** Where the change was made: `admin_api` unless said (the console says `console`, OAuth `oauth`). */
  source?: AuditSource;
  /** Who, when the principal does not say it well (an SSO subject): else `admin`, or `key:` and the hash's start. */
  actor?: string;
}

/** The actor of a principal as the audit log names it: `admin` for the admin key, else the key's hash prefix. */
export function auditActor(p: Pick<Principal, 'isAdmin' | 'keyHash'>): string {
  return p.isAdmin ? 'admin' : `key:${p.keyHash.slice(0, 12)}`;
}

/**
 * Append one change made over HTTP to the audit log: the actor, its role and the client's address (ctx.ip, which
 * honours `server.trust_proxy`) from the request; the rest from `change`. Every route that changes something calls it
 * once, after the change; never give it a raw key (it is cut anyway: redactAudit).
 */
export function recordAudit(
  store: Store,
  ctx: Koa.Context,
  principal: Principal,
  change: AuditChange,
): Promise<string> {
  return store.audit.append({
    actor: change.actor ?? auditActor(principal),
    role: roleOf(principal),
    source: change.source ?? 'admin_api',
    address: ctx.ip,
    action: change.action,
    target: change.target ?? null,
    before: change.before,
    after: change.after,
  });
}
