/**
 * @module
 * One change made in the console, in the audit log: source `console` (or `sso` for a single sign-on session), the
 * actor the session names. Every console route that changes something calls it once, after the change.
 */
import type Koa from 'koa';
import { recordAudit, type AuditChange, type Store } from '../../src/plugin';
import { principalOf, type ConsoleSession } from './session';

export function audit(store: Store, ctx: Koa.Context, s: ConsoleSession, change: AuditChange): Promise<string> {
  return recordAudit(store, ctx, principalOf(s), {
    source: s.openedWith === 'sso' ? 'sso' : 'console',
    actor: s.openedWith === 'sso' ? `sso:${s.subject}` : s.openedWith === 'admin_key' ? 'admin' : undefined,
    ...change,
  });
}
