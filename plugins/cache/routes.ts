/**
 * @module
 * The cache plugin's admin API: POST /v1/cache/purge (operator role) deletes entries by entry, key, account, model or
 * age; GET/PUT /v1/keys/{hash}/cache and /v1/accounts/{id}/cache read (viewer) and set (operator) whether a key or an
 * account uses the cache. Every change is in the audit log.
 */
import type Router from '@koa/router';
import { bodyReader, errors, existingSubject, recordAudit, type AdminGuard, type Store } from '../../src/plugin';
import type { CacheBackend } from './backends/types';
import { bodies } from './generated/bodies';
import { purgeFilter, purgesSomething, type PurgeBody } from './purge';
import type { CacheSettings } from './store/settings';

const readPurge = bodyReader<PurgeBody>(bodies.purge);
const readSetting = bodyReader<{ enabled: boolean | null }>(bodies.setting);

export function registerCacheRoutes(
  router: Router,
  store: Store,
  admin: AdminGuard,
  backend: CacheBackend,
  settings: CacheSettings,
): void {
  router.post('/v1/cache/purge', async (ctx) => {
    const principal = await admin(ctx, 'operator');
    const b = await readPurge(ctx);
    if (!purgesSomething(b)) throw errors.invalidRequest('Name what to purge, or all: true', 'all', 'invalid_field');
    const deleted = await backend.purge(purgeFilter(b, Date.now()));
    await recordAudit(store, ctx, principal, { action: 'cache.purge', target: 'cache', before: b, after: { deleted } });
    ctx.body = { data: { deleted } };
  });
  for (const [subject, path] of [
    ['key', '/v1/keys/:id/cache'],
    ['account', '/v1/accounts/:id/cache'],
  ] as const) {
    router.get(path, async (ctx) => {
      await admin(ctx, 'viewer');
      await existingSubject(store, subject, ctx.params.id);
      ctx.body = { data: { enabled: settings.get(subject, ctx.params.id) } };
    });
    router.put(path, async (ctx) => {
      const principal = await admin(ctx, 'operator');
      const id = ctx.params.id;
      await existingSubject(store, subject, id);
      const { enabled } = await readSetting(ctx);
      const before = settings.get(subject, id);
      await settings.set(subject, id, enabled);
      await recordAudit(store, ctx, principal, {
        action: 'cache.set',
        target: `${subject}:${id}`,
        before: { enabled: before },
        after: { enabled },
      });
      ctx.body = { data: { enabled } };
    });
  }
}
