import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { errors } from '../errors';
import type { GatewayConfig } from '../config/types';
import type { ModelRegistry } from '../models/registry';
import type { GatewayContext } from '../pipeline/plugin';
import { writeStream } from '../stream/sse-writer';
import type { Lifecycle } from '../server/lifecycle';
import { parseSize } from './read-json';
import { createState, readChainBody } from './gateway-state';
import { splitChatRequest } from './chat-request';
import { servesEndpoint } from './endpoints';
import { headList } from '../server/response-head';
import type { Authenticate } from '../auth/contract';

export interface ChatDeps {
  config: GatewayConfig;
  models: ModelRegistry;
  logger: Logger;
  lifecycle: Lifecycle;
  chain: (ctx: GatewayContext) => Promise<void>;
  /** When the auth plugin is in the chain: checked from the headers before the body is read. */
  authenticate?: Authenticate;
}

/** How every chain endpoint reads its body: auth first when present, then the server's size and depth limits. */
export function chainBodyLimits(deps: ChatDeps) {
  const s = deps.config.server;
  return {
    authenticate: deps.authenticate,
    limit: parseSize(s.body_limit),
    limitText: s.body_limit,
    maxDepth: s.max_json_depth,
  };
}

/** The request `timeout` a client may give, and the one it gets when it gives none (spec 8). */
export function timeoutLimits(deps: ChatDeps): { defaultTimeoutS: number; maxTimeoutS: number } {
  return {
    defaultTimeoutS: deps.config.server.default_request_timeout_s,
    maxTimeoutS: deps.config.server.max_request_timeout_s,
  };
}

/** POST /v1/chat/completions: parse, build the per-request state, run the chain, answer. */
export function chatHandler(deps: ChatDeps): (ctx: GatewayContext) => Promise<void> {
  const bodyLimits = chainBodyLimits(deps);
  const limits = timeoutLimits(deps);
  return async (ctx) => {
    const startedAt = process.hrtime.bigint();
    const body = await readChainBody(ctx, bodyLimits);
    const { request, options } = splitChatRequest(body, limits);
    const model = deps.models.get(request.model);
    if (!model) throw errors.modelNotFound(request.model);
    if (!servesEndpoint(model, 'chat')) throw errors.wrongEndpoint(model.id, 'chat');

    ctx.state.gateway = createState(ctx, { startedAt, operation: 'chat', request, options, model }, deps.lifecycle);
    await deps.chain(ctx);
    const s = ctx.state.gateway;
    const result = s.result;
    if (!result) throw errors.internal();
    if (result.kind !== 'stream') {
      if (s.beforeAnswer) for (const f of s.beforeAnswer) await f();
      writeCompletion(ctx.res, s.requestId, s.responseHeaders, JSON.stringify(result.body));
      ctx.respond = false;
      return;
    }
    ctx.respond = false;
    await deps.lifecycle.track(
      writeStream(ctx.res, result.stream, {
        includeUsage: request.stream_options?.include_usage === true,
        headers: s.responseHeaders,
        requestId: s.requestId,
        logger: deps.logger,
        stop: deps.lifecycle.stopSignal,
      }),
    );
  };
}

/**
 * A completion written straight to the socket: Koa's respond would set the type through a MIME lookup, stringify,
 * measure and set each header through its delegates again. The head goes in one writeHead call (headList); the
 * state's headers may replace the request id, never the body's type and length. Headers a plugin set on the response
 * before (ctx.set) are kept: node merges them (its slower path).
 */
function writeCompletion(res: ServerResponse, requestId: string, headers: Record<string, string>, text: string): void {
  const body = { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(Buffer.byteLength(text)) };
  res.writeHead(200, headList({ 'X-Request-Id': requestId }, headers, body));
  res.end(text);
}
