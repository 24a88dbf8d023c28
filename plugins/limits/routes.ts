/**
 * @module
 * What the limits plugin adds to the endpoints: the admin API's limit settings (GET/PUT /v1/keys/{hash}/limits and
 * /v1/accounts/{id}/limits) and their admin section (section.ts), and the filter GET /v1/models applies (a key sees
 * the models it may use).
 */
import type Router from '@koa/router';
import {
  adminSections,
  existingSubject,
  getAuthenticate,
  hasRole,
  readJsonBody,
  recordAudit,
  type AdminGuard,
  type ModelsFilter,
  type SharedServices,
  type Store,
} from '../../src/plugin';
import type { Governance } from './scopes';
import { limitsSection } from './section';
import type { LimitSettingsRepo } from './store/repo';

/**
 * GET/PUT /v1/keys/{hash}/limits and /v1/accounts/{id}/limits: a key's or an account's model allowlist, rate limits
 * and budget notice thresholds, enforced by the limits plugin (reading them needs the viewer role, setting them the
 * operator role; every change is in the audit log with before and after). Replicas see a change within the plugin's
 * settings_cache_ms. The same section is offered to the console (`admin.sections`).
 */
export function registerLimitRoutes(
  router: Router,
  store: Store,
  shared: SharedServices,
  repo: LimitSettingsRepo,
  admin: AdminGuard | undefined,
): void {
  const section = limitsSection(repo);
  adminSections(shared).register(section);
  if (!admin) return;
  for (const [subject, path] of [
    ['key', '/v1/keys/:id/limits'],
    ['account', '/v1/accounts/:id/limits'],
  ] as const) {
    router.get(path, async (ctx) => {
      await admin(ctx, 'viewer');
      const id = await existingSubject(store, subject, ctx.params.id);
      ctx.body = { data: await section.read(subject, id) };
    });
    router.put(path, async (ctx) => {
      const principal = await admin(ctx, 'operator');
      const id = await existingSubject(store, subject, ctx.params.id);
      const body = await readJsonBody(ctx);
      const before = await section.read(subject, id);
      const after = await section.write(subject, id, body, { principal });
      await recordAudit(store, ctx, principal, { action: 'limits.set', target: `${subject}:${id}`, before, after });
      ctx.body = { data: after };
    });
  }
}

/** GET /v1/models for a key: the models its and its account's allowlists let it use (everything for the admin). */
export function modelsFilter(shared: SharedServices, governance: Governance): ModelsFilter {
  return async (ctx) => {
    const authenticate = getAuthenticate(shared);
    if (!authenticate || !ctx.get('authorization')) return () => true;
    const p = await authenticate(ctx).catch(() => undefined);
    // The admin key and keys with a staff role see every model; an account's key what its allowlists permit.
    return !p || hasRole(p, 'viewer') ? () => true : governance.allowlist(p.keyHash, p.accountId);
  };
}
