/**
 * @module
 * The cache plugin's admin API: POST /v1/cache/purge (operator role) deletes entries by entry, key, account, model or
 * age; GET/PUT /v1/keys/{hash}/cache and /v1/accounts/{id}/cache read (viewer) and set (operator) whether a key or an
 * account uses the cache. Every change is in the audit log. The console does the same through the `cache` admin
 * section (section.ts), whose functions these routes call.
 */
import type Router from '@koa/router';
import { existingSubject, readJsonBody, recordAudit, type AdminGuard, type Store } from '../../src/plugin';
import type { CacheBackend } from './backends/types';
import { purge, setCacheSetting } from './section';
import type { CacheSettings } from './store/settings';

export function registerCacheRoutes(
  router: Router,
  store: Store,
  admin: AdminGuard,
  backend: CacheBackend,
  settings: CacheSettings,
): void {
  router.post('/v1/cache/purge', async (ctx) => {
    const principal = await admin(ctx, 'operator');
    const { body, deleted } = await purge(backend, await readJsonBody(ctx));
    await recordAudit(store, ctx, principal, {
      action: 'cache.purge',
      target: 'cache',
      before: body,
      after: { deleted },
    });
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
      const before = settings.get(subject, id);
      const after = await setCacheSetting(settings, subject, id, await readJsonBody(ctx));
      await recordAudit(store, ctx, principal, {
        action: 'cache.set',
        target: `${subject}:${id}`,
        before: { enabled: before },
        after,
      });
      ctx.body = { data: after };
    });
  }
}
