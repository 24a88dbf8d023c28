import type Router from '@koa/router';
import type { GatewayContext } from '../pipeline/plugin';
import { embeddingsOperation } from './embeddings/handler';
import { responsesOperation, type ResponsesDeps } from './responses/handler';
import { runOperation } from './run-operation';
import { anthropicKeyAsBearer, messagesOperation } from './messages/handler';
import { countTokensHandler } from './messages/count-tokens';

/**
 * POST /v1/responses, /v1/embeddings and /v1/messages (Anthropic's): the chat chain with another operation, through
 * the one runner; /v1/messages/count_tokens beside it.
 * GET/DELETE /v1/responses/{id} (and /responses/{id}) belong to the storage plugin.
 */
export function registerOperationRoutes(router: Router, deps: ResponsesDeps): void {
  const responses = runOperation(responsesOperation(deps), deps);
  const embeddings = runOperation(embeddingsOperation(deps), deps);
  router.post('/v1/responses', (ctx) => responses(ctx as unknown as GatewayContext));
  router.post('/v1/embeddings', (ctx) => embeddings(ctx as unknown as GatewayContext));
  const messages = runOperation(messagesOperation(deps), deps);
  const countTokens = countTokensHandler(deps);
  router.post('/v1/messages', (ctx) => {
    anthropicKeyAsBearer(ctx);
    return messages(ctx as unknown as GatewayContext);
  });
  router.post('/v1/messages/count_tokens', (ctx) => {
    anthropicKeyAsBearer(ctx);
    return countTokens(ctx);
  });
}
