/**
 * @module
 * What the limits plugin adds to the endpoints: the admin API's limit settings (GET/PUT /v1/keys/{hash}/limits and
 * /v1/accounts/{id}/limits), and the filter GET /v1/models applies (a key sees the models it may use).
 */
import type Router from '@koa/router';
import {
  bodyReader,
  errors,
  getAuthenticate,
  hasRole,
  recordAudit,
  type AdminGuard,
  type ModelsFilter,
  type SharedServices,
  type Store,
} from '../../src/plugin';
import { LimitSettingsRepo, type LimitSettings, type LimitSubject, type RateLimitSettings } from './store/repo';
import { bodies } from './generated/bodies';
import type { Governance } from './scopes';

export interface LimitSettingsBody {
  allowed_models?: string[] | null;
  rate_limits?: RateLimitSettings | null;
}

const readSettings = bodyReader<LimitSettingsBody>(bodies.limitSettings);

export function limitSettingsJson(s: LimitSettings) {
  return { allowed_models: s.allowedModels, rate_limits: s.rateLimits };
}

/**
 * GET/PUT /v1/keys/{hash}/limits and /v1/accounts/{id}/limits: a key's or an account's model allowlist and rate
 * limits, enforced by the limits plugin (reading them needs the viewer role, setting them the operator role; every
 * change is in the audit log with before and after). Replicas see a change within the plugin's settings_cache_ms.
 */
export function registerLimitRoutes(router: Router, store: Store, admin: AdminGuard): void {
  const repo = new LimitSettingsRepo(store.db);
  const notFound = (subject: LimitSubject) =>
    subject === 'key'
      ? errors.notFound('key_not_found', 'No key with that hash')
      : errors.notFound('account_not_found', 'No account with that id');
  const idOf = (subject: LimitSubject, raw: string) =>
    subject === 'key' && !/^[0-9a-f]{64}$/.test(raw) ? undefined : raw;
  for (const [subject, path] of [
    ['key', '/v1/keys/:id/limits'],
    ['account', '/v1/accounts/:id/limits'],
  ] as const) {
    router.get(path, async (ctx) => {
      await admin(ctx, 'viewer');
      const id = idOf(subject, ctx.params.id);
      const s = id === undefined ? undefined : await repo.get(subject, id);
      if (!s) throw notFound(subject);
      ctx.body = { data: limitSettingsJson(s) };
    });
    router.put(path, async (ctx) => {
      const principal = await admin(ctx, 'operator');
      const id = idOf(subject, ctx.params.id);
      if (id === undefined) throw notFound(subject);
      const b = await readSettings(ctx);
      const before = await repo.get(subject, id);
      if (!before || !(await repo.set(subject, id, { allowedModels: b.allowed_models, rateLimits: b.rate_limits })))
        throw notFound(subject);
      const after = limitSettingsJson((await repo.get(subject, id)) as LimitSettings);
      await recordAudit(store, ctx, principal, {
        action: 'limits.set',
        target: `${subject}:${id}`,
        before: limitSettingsJson(before),
        after,
      });
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
