import type Koa from 'koa';
import { servesEndpoint } from '../../models/endpoints';
import type { ModelConfig } from '../../config/types';
import { errors } from '../../errors';
import type { GatewayContext } from '../../pipeline/plugin';
import { createState } from '../../pipeline/request-state';
import { getAdapter } from '../../providers/registry';
import { countPromptTokens } from '../../tokens/count';
import type { ChatRequest } from '../../types/openai';
import { splitChatRequest } from '../chat-request';
import { readChainBody } from '../read-body';
import { chainBodyLimits, timeoutLimits, type OperationDeps } from '../run-operation';
import { anthropicInbound, writeNative } from './passthrough';
import { translateMessagesRequest } from './request';

/** Does the model's first deployment count tokens itself (an adapter with a same-wire countTokens: Anthropic)? */
function firstCounts(model: ModelConfig, deps: OperationDeps): boolean {
  const first = model.deployments[0];
  const provider = first && deps.config.providers.find((p) => p.name === first.provider);
  if (!provider) return false;
  const adapter = getAdapter(provider.type);
  return adapter.kind === 'http' && adapter.sameWire?.['anthropic-messages']?.countTokens !== undefined;
}

/**
 * POST /v1/messages/count_tokens. When the model's first deployment is Anthropic: the provider's own count, from its
 * /v1/messages/count_tokens (the client's body as sent, the deployment's model), through the chain like any request
 * (auth, allowlists, the limits plugin's requests per minute and its attempt guard, fallbacks; through the transport
 * with the attempt's timeouts), metered as free: the chain sees an answer with no usage, so credit settles nothing,
 * limits count one request and no tokens, the record says 0 tokens. `X-Gateway-Token-Count: provider`. Otherwise
 * (or when a fallback that cannot count answers): the gateway's own tokenizer, the count the chain uses for limits and
 * credit bounds, `X-Gateway-Token-Count: estimate`, without the chain (free, nothing reserved or sent upstream).
 */
export function countTokensHandler(deps: OperationDeps): (ctx: Koa.Context) => Promise<void> {
  const bodyLimits = chainBodyLimits(deps);
  const limits = timeoutLimits(deps);
  return async (koa) => {
    const ctx = koa as unknown as GatewayContext;
    const startedAt = process.hrtime.bigint();
    const body = await readChainBody(ctx, bodyLimits);
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
    if (!servesEndpoint(model, 'chat')) throw errors.wrongEndpoint(model.id, 'messages');
    const estimate = (request: unknown) => {
      koa.set('X-Gateway-Token-Count', 'estimate');
      koa.body = { input_tokens: countPromptTokens(request as ChatRequest) };
    };
    if (!firstCounts(model, deps)) return estimate(chat);
    const { request, options } = splitChatRequest(chat, limits);
    const inbound = anthropicInbound(koa, body as Record<string, unknown>, true);
    const init = { startedAt, operation: 'messages' as const, request, options, model, inbound };
    const s = (ctx.state.gateway = createState(ctx, init, deps.lifecycle));
    await deps.chain(ctx);
    const r = s.result;
    if (r?.kind !== 'completion' || r.wire !== 'anthropic-messages' || !r.native) {
      koa.set(s.responseHeaders);
      return estimate(s.request);
    }
    if (s.beforeAnswer) for (const f of s.beforeAnswer) await f();
    koa.respond = false;
    writeNative(koa.res, s.requestId, { ...s.responseHeaders, 'X-Gateway-Token-Count': 'provider' }, r.native);
  };
}
