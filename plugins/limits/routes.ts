/**
 * @module
 * What the limits plugin adds to the endpoints: the admin API's limit settings (GET/PUT /v1/keys/{hash}/limits and
 * /v1/accounts/{id}/limits), and the filter GET /v1/models applies (a key sees the models it may use).
 */
import type Router from '@koa/router';
import type Koa from 'koa';
import {
  bodyReader,
  errors,
  getAuthenticate,
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
 * GET/PUT /v1/keys/{hash}/limits and /v1/accounts/{id}/limits (admin key): a key's or an
 * account's model allowlist and rate limits, enforced by the limits plugin. Replicas see a
 * change within the plugin's settings_cache_ms.
 */
export function registerLimitRoutes(router: Router, store: Store, admin: (ctx: Koa.Context) => Promise<unknown>): void {
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
      await admin(ctx);
      const id = idOf(subject, ctx.params.id);
      const s = id === undefined ? undefined : await repo.get(subject, id);
      if (!s) throw notFound(subject);
      ctx.body = { data: limitSettingsJson(s) };
    });
    router.put(path, async (ctx) => {
      await admin(ctx);
      const id = idOf(subject, ctx.params.id);
      if (id === undefined) throw notFound(subject);
      const b = await readSettings(ctx);
      if (!(await repo.set(subject, id, { allowedModels: b.allowed_models, rateLimits: b.rate_limits })))
        throw notFound(subject);
      ctx.body = { data: limitSettingsJson((await repo.get(subject, id)) as LimitSettings) };
    });
  }
}

/** GET /v1/models for a key: the models its and its account's allowlists let it use (everything for the admin). */
export function modelsFilter(shared: SharedServices, governance: Governance): ModelsFilter {
  return async (ctx) => {
    const authenticate = getAuthenticate(shared);
    if (!authenticate || !ctx.get('authorization')) return () => true;
    const p = await authenticate(ctx).catch(() => undefined);
    return !p || p.isAdmin ? () => true : governance.allowlist(p.keyHash, p.accountId);
  };
}
