/**
 * @module
 * The audit log in the console: GET /console/api/audit, for the viewer role and above, with the filters and paging of
 * GET /v1/audit (since, until, actor, action, target, source; `before` = the last id of the previous page) and its
 * CSV / NDJSON export (`format`).
 */
import type Router from '@koa/router';
import { requireRole, serveAudit, type Store } from '../../src/plugin';
import { principalOf } from './session';
import type { ServiceContext } from './context';

export function registerConsoleAudit(router: Router, store: Store, need: ServiceContext['need']): void {
  router.get('/console/api/audit', async (ctx) => {
    requireRole(principalOf(await need(ctx)), 'viewer');
    ctx.set('Cache-Control', 'no-store');
    await serveAudit(ctx, store);
  });
}
