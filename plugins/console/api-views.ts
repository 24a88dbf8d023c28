/**
 * @module
 * Other plugins' read-only views in the console (decision 0054): GET /console/api/settings/{section}/views/{view}
 * with the filters as query parameters (and `cursor`), for a session with the view's role. A read: nothing audited.
 */
import type Router from '@koa/router';
import { adminSections, errors, requireRole, type SharedServices } from '../../src/plugin';
import type { ServiceContext } from './context';
import { principalOf } from './session';

/** Query values reach the plugin as strings of at most this many characters (a repeated one: its first). */
const MAX_VALUE = 200;

function queryOf(q: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(q)) {
    const one = Array.isArray(v) ? v[0] : v;
    if (typeof one === 'string') out[k] = one.slice(0, MAX_VALUE);
  }
  return out;
}

export function registerViewRoutes(router: Router, deps: Pick<ServiceContext, 'shared' | 'need'>): void {
  const shared: SharedServices = deps.shared;
  router.get('/console/api/settings/:section/views/:view', async (ctx) => {
    const s = await deps.need(ctx);
    const section = adminSections(shared).get(ctx.params.section);
    const name = ctx.params.view;
    const view = section && Object.hasOwn(section.views ?? {}, name) ? section.views?.[name] : undefined;
    if (!section || !view)
      throw errors.notFound(
        'not_found',
        `No view '${name.slice(0, 40)}' in '${ctx.params.section.slice(0, 40)}'`,
        'view',
      );
    requireRole(principalOf(s), view.role ?? section.roles?.read ?? 'viewer');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = await view.read(queryOf(ctx.query), { principal: principalOf(s) });
  });
}
