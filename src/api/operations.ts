import type Router from '@koa/router';
import type { GatewayContext } from '../pipeline/plugin';
import { embeddingsOperation } from './embeddings/handler';
import { responsesOperation, type ResponsesDeps } from './responses/handler';
import { runOperation } from './run-operation';

/**
 * POST /v1/responses and POST /v1/embeddings: the chat chain with another operation, through the one runner.
 * GET/DELETE /v1/responses/{id} (and /responses/{id}) belong to the storage plugin.
 */
export function registerOperationRoutes(router: Router, deps: ResponsesDeps): void {
  const responses = runOperation(responsesOperation(deps), deps);
  const embeddings = runOperation(embeddingsOperation(deps), deps);
  router.post('/v1/responses', (ctx) => responses(ctx as unknown as GatewayContext));
  router.post('/v1/embeddings', (ctx) => embeddings(ctx as unknown as GatewayContext));
}
