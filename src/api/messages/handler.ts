import type Koa from 'koa';
import { errors } from '../../errors';
import type { GatewayContext } from '../../pipeline/plugin';
import { promptTokens, type GatewayState } from '../../pipeline/state';
import { splitChatRequest } from '../chat-request';
import {
  answerStream,
  timeoutLimits,
  type OperationDeps,
  type OperationSpec,
  type ParsedRequest,
} from '../run-operation';
import { MessagesEvents } from './events';
import { translateMessagesRequest } from './request';
import { messageId, toMessage } from './response';
import { anthropicInbound, SameWireEvents, writeNative } from './passthrough';
import type { SameWireRequest } from '../../providers/types';

interface ParsedMessages extends ParsedRequest {
  stops: string[];
  dropped: string[];
  inbound: SameWireRequest;
}

/**
 * Anthropic clients send their key as `x-api-key` (the SDKs and Claude Code; `Authorization: Bearer` when
 * ANTHROPIC_AUTH_TOKEN is set): the gateway's keys work either way, so the auth plugin reads it as a Bearer key.
 */
export function anthropicKeyAsBearer(ctx: Koa.Context): void {
  const key = ctx.req.headers['x-api-key'];
  if (typeof key === 'string' && key.length > 0 && ctx.req.headers.authorization === undefined)
    ctx.req.headers.authorization = `Bearer ${key}`;
}

/**
 * POST /v1/messages: an Anthropic Messages request translated onto the chat chain, so that keys, credit, limits,
 * fallbacks (each attempt guarded), records, metrics and traces apply as to chat; the answer is an Anthropic Message
 * or its event stream, errors in Anthropic's shape (the route's error format). `anthropic-version` and
 * `anthropic-beta` are accepted as sent. The request as sent rides along (`inbound`): an attempt on an Anthropic
 * upstream sends it as it is and its answer comes back as Anthropic sent it (passthrough, the same-wire hook); any
 * other attempt is translated.
 */
export function messagesOperation(deps: OperationDeps): OperationSpec<ParsedMessages> {
  const limits = timeoutLimits(deps);
  return {
    name: 'messages',
    endpoint: 'chat',
    parse(ctx, body) {
      const version = ctx.get('anthropic-version') || undefined;
      const { chat, dropped } = translateMessagesRequest(body, version);
      const stops = Array.isArray(chat.stop) ? (chat.stop as unknown[]).filter((s) => typeof s === 'string') : [];
      return {
        ...splitChatRequest(chat, limits),
        stops: stops as string[],
        dropped,
        inbound: anthropicInbound(ctx, body),
      };
    },
    state: (_model, p) => ({ inbound: p.inbound }),
    prepare(s, p) {
      if (p.dropped.length > 0) s.responseHeaders['X-Gateway-Dropped-Params'] = p.dropped.join(', ').slice(0, 1000);
    },
    answer: (ctx, s, p) => answerMessages(ctx, s, p, deps),
  };
}

async function answerMessages(ctx: GatewayContext, s: GatewayState, p: ParsedMessages, deps: OperationDeps) {
  const result = s.result;
  if (!result || result.kind === 'embeddings') throw errors.internal();
  // A passthrough sent everything as it came: nothing was dropped.
  if (result.wire === 'anthropic-messages') delete s.responseHeaders['X-Gateway-Dropped-Params'];
  if (result.kind === 'completion') {
    if (s.beforeAnswer) for (const f of s.beforeAnswer) await f();
    if (result.wire === 'anthropic-messages' && result.native) {
      ctx.respond = false;
      return writeNative(ctx.res, s.requestId, s.responseHeaders, result.native);
    }
    ctx.set(s.responseHeaders);
    ctx.body = toMessage(result.body, s.model.id, p.stops);
    return;
  }
  const framer =
    result.wire === 'anthropic-messages'
      ? new SameWireEvents()
      : new MessagesEvents({ id: messageId(s.completionId), model: s.model.id, inputTokens: promptTokens(s) });
  await answerStream(ctx, s, result.stream, deps, true, framer);
}
