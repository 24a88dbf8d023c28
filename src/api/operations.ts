import type Router from '@koa/router';
import type { GatewayContext } from '../pipeline/plugin';
import { embeddingsHandler } from './embeddings/handler';
import { responsesHandler, type ResponsesDeps } from './responses/handler';

/**
 * POST /v1/responses and POST /v1/embeddings: the chat chain with another operation.
 * GET/DELETE /v1/responses/{id} (and /responses/{id}) belong to the storage plugin.
 */
export function registerOperationRoutes(router: Router, deps: ResponsesDeps): void {
  const responses = responsesHandler(deps);
  const embeddings = embeddingsHandler(deps);
  router.post('/v1/responses', (ctx) => responses(ctx as unknown as GatewayContext));
  router.post('/v1/embeddings', (ctx) => embeddings(ctx as unknown as GatewayContext));
}
