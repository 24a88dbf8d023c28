import type { Logger } from 'pino';
import { errors } from '../errors';
import type { GatewayConfig } from '../config/types';
import type { ModelRegistry } from '../models/registry';
import type { GatewayContext } from '../pipeline/plugin';
import { writeStream } from '../stream/sse-writer';
import type { Lifecycle } from '../server/lifecycle';
import { readJson, parseSize } from './read-json';
import { splitChatRequest } from './chat-request';
import type { Authenticate } from '../auth/contract';
import { authenticateFirst } from '../server/early-auth';

export interface ChatDeps {
  config: GatewayConfig;
  models: ModelRegistry;
  logger: Logger;
  lifecycle: Lifecycle;
  chain: (ctx: GatewayContext) => Promise<void>;
  /** When the auth plugin is in the chain: checked from the headers before the body is read. */
  authenticate?: Authenticate;
}

/** POST /v1/chat/completions: parse, build the per-request state, run the chain, answer. */
export function chatHandler(deps: ChatDeps): (ctx: GatewayContext) => Promise<void> {
  const limit = parseSize(deps.config.server.body_limit);
  const limits = { defaultTimeoutS: deps.config.server.default_request_timeout_s, maxTimeoutS: deps.config.server.max_request_timeout_s };
  return async (ctx) => {
    const startedAt = process.hrtime.bigint();
    if (deps.authenticate) await authenticateFirst(ctx, deps.authenticate);
    const body = await readJson(ctx.req, limit, deps.config.server.body_limit, deps.config.server.max_json_depth);
    const { request, options } = splitChatRequest(body, limits);
    const model = deps.models.get(request.model);
    if (!model) throw errors.modelNotFound(request.model);

    const ac = new AbortController();
    const onClose = () => {
      if (!ctx.res.writableFinished) ac.abort();
    };
    ctx.res.once('close', onClose);
    // Shutdown waits for this answer (and stops it with 503 shutting_down at the deadline).
    ctx.res.once('close', deps.lifecycle.enter(ac));
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
      ctx.set(s.responseHeaders);
      ctx.body = result.body;
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
