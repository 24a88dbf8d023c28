import type Koa from 'koa';
import type { Logger } from 'pino';
import { randomId } from '../ids';
import { errors, toAnthropicError, toGatewayError, toOpenAIBody, toProblem, type GatewayError } from '../errors';
import { accessLogger } from '../logger';
import type { GatewayContext } from '../pipeline/plugin';
import type { HttpObserver } from '../pipeline/hooks';
import type { Lifecycle } from './lifecycle';
import type { RefusalRecorder } from './refusals';
import { activity } from './idle-gc';
import { serializeJsonBody } from './json-body';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const PROBES = new Set(['/health', '/ready']);

export interface OuterDeps {
  logger: Logger;
  lifecycle: Lifecycle;
  httpObserver?: HttpObserver;
  /** The Host names answered (server.allowed_hosts); undefined answers any. */
  allowHost?: (host: string | undefined) => boolean;
  /** Light records of refused requests (4xx on the chain endpoints): every outcome counted. */
  refusals?: RefusalRecorder;
}

/**
 * The outermost middleware of every request: its id, the drain's 503, the one place errors are serialized, the HTTP
 * observer and the access log. `early`: X-Request-Id is set before the route runs; the chat route's fast path leaves
 * it to whatever writes the answer (the completion, the stream, or an error below), so that its head is written in
 * one call (see api/chat.ts).
 */
export function outerMiddleware(deps: OuterDeps, early: boolean): Koa.Middleware {
  const { logger, lifecycle, httpObserver, allowHost, refusals } = deps;
  const access = accessLogger(logger);
  return async (ctx, next) => {
    activity.requests++;
    const started = process.hrtime.bigint();
    const incoming = ctx.req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomId('req_');
    ctx.state.requestId = requestId;
    if (early) ctx.res.setHeader('X-Request-Id', requestId);
    try {
      // Probes (kubelets, load balancers) name the address they dial: /health and /ready answer any Host.
      if (allowHost && !allowHost(ctx.req.headers.host) && !PROBES.has(ctx.path)) throw errors.hostNotAllowed();
      if (lifecycle.draining) {
        ctx.set('Connection', 'close');
        throw errors.shuttingDown();
      }
      await next();
      if (ctx.body === undefined && ctx.respond !== false) {
        if (ctx.status === 404) throw errors.routeNotFound(ctx.method, ctx.path);
        if (ctx.status === 405) throw errors.methodNotAllowed(ctx.method, ctx.path);
      }
      serializeJsonBody(ctx);
    } catch (e) {
      const err = toGatewayError(e);
      if (err !== e) logger.error({ err: e, requestId }, 'unhandled error');
      if (ctx.headerSent || ctx.respond === false) {
        logger.warn({ requestId, code: err.code }, 'error after the response started');
      } else {
        if (!early) ctx.res.setHeader('X-Request-Id', requestId);
        respondError(ctx, err);
        serializeJsonBody(ctx);
        refusals?.note(ctx, err, Number(process.hrtime.bigint() - started) / 1e6);
      }
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const status = ctx.respond === false ? ctx.res.statusCode : ctx.status;
      httpObserver?.((ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched', ctx.method, status, ms / 1000);
      const s = ctx.state.gateway as GatewayContext['state']['gateway'] | undefined;
      access({
        requestId,
        method: ctx.method,
        path: ctx.path,
        status,
        ms: Math.round(ms * 1000) / 1000,
        model: s?.model.id,
        key: s?.principal?.keyLabel,
      });
    }
  };
}

/**
 * The one place errors are written: problem+json under /responses, Anthropic's error object on /v1/messages (its
 * clients parse that shape), the OpenAI error object elsewhere.
 */
export function respondError(ctx: Koa.Context, err: GatewayError): void {
  ctx.status = err.status;
  if (err.retryAfter !== undefined) ctx.set('Retry-After', String(Math.ceil(err.retryAfter)));
  if (ctx.path === '/v1/messages' || ctx.path.startsWith('/v1/messages/')) {
    ctx.body = toAnthropicError(err);
  } else if (ctx.path === '/responses' || ctx.path.startsWith('/responses/')) {
    ctx.type = 'application/problem+json';
    ctx.body = JSON.stringify(toProblem(err));
  } else {
    ctx.body = toOpenAIBody(err);
  }
}
