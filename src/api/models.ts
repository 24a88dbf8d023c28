import type Router from '@koa/router';
import { errors } from '../errors';
import type { ModelRegistry } from '../models/registry';
import { toModelObject } from '../models/registry';

/** GET /v1/models and GET /v1/models/<id> (ids may contain slashes). */
export function registerModelRoutes(router: Router, models: ModelRegistry, guard: (ctx: Router.RouterContext) => Promise<void>): void {
  router.get('/v1/models', async (ctx) => {
    await guard(ctx);
    ctx.body = models.list;
  });
  router.get('/v1/models/{*id}', async (ctx) => {
    await guard(ctx);
    const id = decodeURIComponent(ctx.path.slice('/v1/models/'.length));
    const m = models.get(id);
    if (!m) throw errors.modelNotFound(id);
    ctx.body = toModelObject(m);
  });
}
