import { getAuthenticate } from '../../auth/contract';
import { errors } from '../../errors';
import { randomId } from '../../ids';
import type { GatewayContext } from '../../pipeline/plugin';
import type { Store } from '../../store/index';
import { writeStream } from '../../stream/sse-writer';
import type { InputItem, OutputItem } from '../../types/responses';
import { chainBodyLimits, timeoutLimits, type ChatDeps } from '../chat';
import { splitChatRequest } from '../chat-request';
import { servesEndpoint } from '../endpoints';
import { createState, readInputBody } from '../gateway-state';
import { INPUT_ITEMS, RESPONSE_SAVER, type ResponseSaver } from './contract';
import { ResponsesEvents } from './events';
import { echoOf, fromCompletion, type ResponseMeta } from './output';
import { inResponsesTerms, inputItems, outputAsInput, toChatBody } from './request';
import type { SharedServices } from '../../pipeline/shared-services';

export interface ResponsesDeps extends ChatDeps {
  store: Store;
  shared: SharedServices;
}

/** The account that owns responses made without the auth plugin (as the storage plugin's routes see it). */
const ANONYMOUS = 'anonymous';

/**
 * The stored conversation a previous_response_id continues: its input items, then its output. 404 when not the
 * caller's.
 */
async function previousItems(ctx: GatewayContext, deps: ResponsesDeps, id: unknown): Promise<InputItem[]> {
  if (typeof id !== 'string' || id.length === 0)
    throw errors.invalidRequest('previous_response_id must be a response id', 'previous_response_id', 'invalid_type');
  const auth = getAuthenticate(deps.shared);
  const caller = auth ? (await auth(ctx)).accountId : ANONYMOUS;
  const r = await deps.store.responses.get(id);
  if (!r || r.accountId !== caller)
    throw errors.notFound('response_not_found', `No response '${id.slice(0, 128)}'`, 'previous_response_id');
  const items = Array.isArray(r.body[INPUT_ITEMS]) ? (r.body[INPUT_ITEMS] as InputItem[]) : [];
  return [...items, ...outputAsInput(Array.isArray(r.body.output) ? (r.body.output as OutputItem[]) : [])];
}

/**
 * POST /v1/responses: the Responses request is mapped onto a chat request and runs the
 * same chain as chat (auth, params, credit, fallback, storage, routing apply unchanged);
 * the chat result comes back as a `response` object or the Responses event stream. The
 * storage plugin keeps the object through the saver it leaves in the state.
 */
export function responsesHandler(deps: ResponsesDeps): (ctx: GatewayContext) => Promise<void> {
  const bodyLimits = chainBodyLimits(deps);
  const limits = timeoutLimits(deps);
  return async (ctx) => {
    const startedAt = process.hrtime.bigint();
    const body = await readInputBody(ctx, bodyLimits);
    const previous = body.previous_response_id ?? null;
    const items = [...(previous === null ? [] : await previousItems(ctx, deps, previous)), ...inputItems(body.input)];
    const { request, options } = splitChatRequest(toChatBody(body, items), limits);
    const model = deps.models.get(request.model);
    if (!model) throw errors.modelNotFound(request.model);
    if (!servesEndpoint(model, 'chat')) throw errors.wrongEndpoint(model.id, 'responses');

    const meta: ResponseMeta = {
      id: randomId('resp_'),
      model: model.id,
      createdAt: Math.floor(Date.now() / 1000),
      echo: echoOf(body, previous as string | null),
    };
    ctx.state.gateway = createState(
      ctx,
      { startedAt, operation: 'responses', request, options, model, completionId: meta.id },
      deps.lifecycle,
    );
    const s = ctx.state.gateway;
    await deps.chain(ctx).catch((e: unknown) => {
      throw inResponsesTerms(e);
    });
    const saver = s.extensions[RESPONSE_SAVER] as ResponseSaver | undefined;
    const result = s.result;
    if (!result || result.kind === 'embeddings') throw errors.internal();
    if (result.kind === 'completion') {
      const r = fromCompletion(result.body, meta);
      await saver?.({ ...r, [INPUT_ITEMS]: items }, r.status);
      ctx.set(s.responseHeaders);
      ctx.body = r;
      return;
    }
    const framer = new ResponsesEvents(meta, items, saver);
    result.stream.observe({ name: 'responses', onEnd: (end) => (end.cancelled ? framer.cancelled(end) : undefined) });
    ctx.respond = false;
    await deps.lifecycle.track(
      writeStream(ctx.res, result.stream, {
        includeUsage: true,
        headers: s.responseHeaders,
        requestId: s.requestId,
        logger: deps.logger,
        stop: deps.lifecycle.stopSignal,
        framer,
      }),
    );
  };
}
