import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { errors } from '../errors';
import type { GatewayConfig } from '../config/types';
import type { ModelRegistry } from '../models/registry';
import type { GatewayContext } from '../pipeline/plugin';
import { writeStream } from '../stream/sse-writer';
import type { Lifecycle } from '../server/lifecycle';
import { readJson, parseSize } from './read-json';
import { splitChatRequest } from './chat-request';

export interface ChatDeps {
  config: GatewayConfig;
  models: ModelRegistry;
  logger: Logger;
  lifecycle: Lifecycle;
  chain: (ctx: GatewayContext) => Promise<void>;
}

/** POST /v1/chat/completions: parse, build the per-request state, run the chain, answer. */
export function chatHandler(deps: ChatDeps): (ctx: GatewayContext) => Promise<void> {
  const limit = parseSize(deps.config.server.body_limit);
  const limits = { defaultTimeoutS: deps.config.server.default_request_timeout_s, maxTimeoutS: deps.config.server.max_request_timeout_s };
  return async (ctx) => {
    const startedAt = process.hrtime.bigint();
    const body = await readJson(ctx.req, limit, deps.config.server.body_limit);
    const { request, options } = splitChatRequest(body, limits);
    const model = deps.models.get(request.model);
    if (!model) throw errors.modelNotFound(request.model);

    const ac = new AbortController();
    const onClose = () => {
      if (!ctx.res.writableFinished) ac.abort();
    };
    ctx.res.once('close', onClose);
    ctx.state.gateway = {
      requestId: ctx.state.requestId,
      startedAt,
      request,
      options,
      model,
      attempts: [],
      responseHeaders: {},
      signal: ac.signal,
      upstreamMs: 0,
      extensions: {},
    };
    await deps.chain(ctx);
    const s = ctx.state.gateway;
    const result = s.result;
    if (!result) throw errors.internal();
    if (result.kind === 'completion') {
      writeCompletion(ctx.res, s.responseHeaders, JSON.stringify(result.body));
      ctx.respond = false;
      return;
    }
    ctx.respond = false;
    await deps.lifecycle.track(
      writeStream(ctx.res, result.stream, {
        includeUsage: request.stream_options?.include_usage === true,
        headers: { ...s.responseHeaders, 'X-Request-Id': s.requestId },
        logger: deps.logger,
        stop: deps.lifecycle.stopSignal,
      }),
    );
  };
}

/**
 * A completion written straight to the socket: Koa's respond would set the type through a
 * MIME lookup, stringify, measure and set each header through its delegates again.
 */
function writeCompletion(res: ServerResponse, headers: Record<string, string>, text: string): void {
  res.statusCode = 200;
  for (const k in headers) res.setHeader(k, headers[k]);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(text);
}
