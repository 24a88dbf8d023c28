import type Koa from 'koa';
import { errors } from '../../errors';
import type { GatewayContext } from '../../pipeline/plugin';
import { countPromptTokens } from '../../tokens/count';
import type { ChatRequest } from '../../types/openai';
import { readChainBody } from '../read-body';
import { chainBodyLimits, type OperationDeps } from '../run-operation';
import { translateMessagesRequest } from './request';

/**
 * POST /v1/messages/count_tokens: the prompt's tokens as the gateway's own tokenizer counts them (the same count the
 * chain uses for limits and credit bounds when a provider reports none), said so in `X-Gateway-Token-Count:
 * estimate`. Authenticated like /v1/messages; free (nothing is reserved or sent upstream).
 */
export function countTokensHandler(deps: OperationDeps): (ctx: Koa.Context) => Promise<void> {
  const bodyLimits = chainBodyLimits(deps);
  return async (ctx) => {
    const body = await readChainBody(ctx as unknown as GatewayContext, bodyLimits);
    if (typeof body !== 'object' || body === null || Array.isArray(body))
      throw errors.invalidRequest('The request body must be a JSON object', null, 'invalid_body');
    // count_tokens takes no max_tokens: any positive one lets the request translate.
    const { chat } = translateMessagesRequest({
      ...(body as Record<string, unknown>),
      max_tokens: 1,
      stream: undefined,
    });
    const model = deps.models.get(String(chat.model));
    if (!model) throw errors.modelNotFound(String(chat.model));
    ctx.set('X-Gateway-Token-Count', 'estimate');
    ctx.body = { input_tokens: countPromptTokens(chat as unknown as ChatRequest) };
  };
}
