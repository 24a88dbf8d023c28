import { getAuthenticate } from '../../auth/contract';
import { errors } from '../../errors';
import { randomId } from '../../ids';
import type { GatewayContext } from '../../pipeline/plugin';
import type { Store } from '../../store/index';
import type { InputItem, OutputItem } from '../../types/responses';
import { splitChatRequest } from '../chat-request';
import {
  answerStream,
  timeoutLimits,
  type OperationDeps,
  type OperationSpec,
  type ParsedRequest,
} from '../run-operation';
import type { GatewayState } from '../../pipeline/state';
import { INPUT_ITEMS, RESPONSE_SAVER, STORED_RESPONSES, type ResponseSaver } from './contract';
import { ResponsesEvents } from './events';
import { echoOf, fromCompletion, type ResponseMeta } from './output';
import { inputItems, outputAsInput } from './items';
import { inResponsesTerms, toChatBody } from './request';
import { summaryAsked } from './reasoning';
import type { ToolMap } from './tools';
import { nextRound, openRemoteTools, totalUsage, type RemoteRun } from './remote-rounds';
import { responseUsage } from './output';

/** The response header naming what the gateway ignored (the params plugin adds the model's own to it). */
const DROPPED_HEADER = 'X-Gateway-Dropped-Params';
import type { SharedServices } from '../../pipeline/shared-services';

export interface ResponsesDeps extends OperationDeps {
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
  const r = await deps.shared.get(STORED_RESPONSES)?.get(id);
  if (!r || r.accountId !== caller)
    throw errors.notFound('response_not_found', `No response '${id.slice(0, 128)}'`, 'previous_response_id');
  const items = Array.isArray(r.body[INPUT_ITEMS]) ? (r.body[INPUT_ITEMS] as InputItem[]) : [];
  return [...items, ...outputAsInput(Array.isArray(r.body.output) ? (r.body.output as OutputItem[]) : [])];
}

interface ParsedResponses extends ParsedRequest {
  items: InputItem[];
  body: Record<string, unknown>;
  previous: string | null;
  tools: ToolMap;
  /** What was ignored, for X-Gateway-Dropped-Params. */
  dropped: string[];
  meta?: ResponseMeta;
  /** Its remote MCP tools and their rounds so far (./remote-rounds.ts). */
  remote?: RemoteRun;
}

/**
 * POST /v1/responses: the Responses request is mapped onto a chat request and runs the same chain as chat (auth,
 * params, credit, fallback, storage, routing apply unchanged); the chat result comes back as a `response` object or
 * the Responses event stream. The storage plugin keeps the object through the saver it leaves in the state.
 */
export function responsesOperation(deps: ResponsesDeps): OperationSpec<ParsedResponses> {
  const limits = timeoutLimits(deps);
  return {
    name: 'responses',
    endpoint: 'chat',
    requiresInput: true,
    async parse(ctx, body) {
      const previous = (body.previous_response_id ?? null) as string | null;
      const before = previous === null ? [] : await previousItems(ctx, deps, previous);
      const items = [...before, ...inputItems(body.input)];
      const remote = await openRemoteTools(ctx, deps.shared, body, 'responses');
      const { chat, tools, dropped } = toChatBody(remote?.body ?? body, items);
      const parsed = { ...splitChatRequest(chat, limits), items, body, previous, tools, dropped };
      return remote ? { ...parsed, remote: remote.run } : parsed;
    },
    state(model, p) {
      const meta: ResponseMeta = (p.meta ??= {
        id: randomId('resp_'),
        model: model.id,
        createdAt: Math.floor(Date.now() / 1000),
        echo: echoOf(p.body, p.previous),
        tools: p.tools,
        summaries: summaryAsked(p.body),
      });
      // A remote tool's later rounds are requests of their own: the response's id with the round's number.
      const round = p.remote?.round ?? 0;
      return { completionId: round === 0 ? meta.id : `${meta.id}_r${round}` };
    },
    again(_ctx, s, p) {
      const remote = p.remote;
      return remote ? nextRound(s, p.request, remote).then((request) => request && { ...p, request }) : null;
    },
    prepare(s, p) {
      if (p.dropped.length > 0) s.responseHeaders[DROPPED_HEADER] = p.dropped.join(', ').slice(0, 1000);
    },
    chainError: inResponsesTerms,
    answer: (ctx, s, p) => answerResponse(ctx, s, p, deps),
  };
}

async function answerResponse(
  ctx: GatewayContext,
  s: GatewayState,
  { items, meta, remote }: ParsedResponses,
  deps: ResponsesDeps,
): Promise<void> {
  const saver = s.extensions[RESPONSE_SAVER] as ResponseSaver | undefined;
  const result = s.result;
  if (!result || result.kind === 'embeddings' || !meta) throw errors.internal();
  if (result.kind === 'completion') {
    const r = fromCompletion(result.body, meta);
    if (remote) {
      r.output = [...remote.items, ...r.output];
      r.usage = responseUsage(totalUsage(result.body.usage, remote.usage));
    }
    await saver?.({ ...r, [INPUT_ITEMS]: items }, r.status);
    ctx.set(s.responseHeaders);
    ctx.body = r;
    return;
  }
  const framer = new ResponsesEvents(meta, items, saver);
  result.stream.observe({ name: 'responses', onEnd: (end) => (end.cancelled ? framer.cancelled(end) : undefined) });
  await answerStream(ctx, s, result.stream, deps, true, framer);
}
