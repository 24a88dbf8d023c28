import type Router from '@koa/router';
import { errors } from '../errors';
import type { ModelRegistry } from '../models/registry';
import { toModelObject } from '../models/registry';
import type { ModelsFilter } from '../auth/contract';

/** GET /v1/models and GET /v1/models/<id> (ids may contain slashes). */
export function registerModelRoutes(
  router: Router,
  models: ModelRegistry,
  guard: (ctx: Router.RouterContext) => Promise<void>,
  filter?: ModelsFilter,
): void {
  router.get('/v1/models', async (ctx) => {
    await guard(ctx);
    const allowed = filter ? await filter(ctx) : undefined;
    ctx.body = allowed ? { ...models.list, data: models.list.data.filter((m) => allowed(m.id)) } : models.list;
  });
  router.get('/v1/models/{*id}', async (ctx) => {
    await guard(ctx);
    const id = decodeURIComponent(ctx.path.slice('/v1/models/'.length));
    const m = models.get(id);
    if (!m) throw errors.modelNotFound(id);
    if (filter && !(await filter(ctx))(id)) throw errors.modelNotAllowed(id);
    ctx.body = toModelObject(m);
  });
}
