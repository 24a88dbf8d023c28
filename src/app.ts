import { randomId } from './ids';
import Koa from 'koa';
import type { RequestListener } from 'node:http';
import Router from '@koa/router';
import type { Logger } from 'pino';
import { Registry } from './metrics/prom-client';
import type { GatewayConfig } from './config/types';
import { errors, toGatewayError, toOpenAIBody, toProblem, type GatewayError } from './errors';
import { accessLogger, createLogger } from './logger';
import { ModelRegistry } from './models/registry';
import { loadPlugins, setupPlugins } from './pipeline/loader';
import { compose } from './pipeline/compose';
import { HTTP_OBSERVER, PLUGIN_TIMER, READINESS } from './pipeline/hooks';
import type { GatewayContext, GatewayMiddleware, PluginServices } from './pipeline/plugin';
import { coreExtensions } from './pipeline/loader';
import { AttemptGuards } from './pipeline/attempt-guards';
import { sharedServices } from './pipeline/shared-services';
import { redisBackend, scopedState, storeBackend } from './pipeline/shared-state';
import { openStore, type Store } from './store/index';
import { Transport } from './transport/http';
import { Lifecycle } from './server/lifecycle';
import { activity, startIdleGc } from './server/idle-gc';
import { jsonBodiesWithoutWebGlobals, serializeJsonBody } from './server/json-body';
import { chatHandler } from './api/chat';
import { registerOperationRoutes } from './api/operations';
import { getAdapter } from './providers/registry';
import { registerModelRoutes } from './api/models';
import { MODELS_FILTER, MODELS_GUARD, getAuthenticate } from './auth/contract';

export interface Gateway {
  app: Koa;
  /** The HTTP request listener: the app, with the chat route's fast path. */
  listener: RequestListener;
  services: PluginServices;
  lifecycle: Lifecycle;
  /** Close plugins, upstream pools and the store (after the HTTP server has stopped). */
  close(): Promise<void>;
}

export interface CreateOptions {
  logger?: Logger;
  /** Use this store instead of opening the configured one (tests share one). */
  store?: Store;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const CHAT_ROUTE = '/v1/chat/completions';

/** Build the Koa app for a validated config: store, plugins, routes. No listen(). */
export async function createApp(config: GatewayConfig, opts: CreateOptions = {}): Promise<Gateway> {
  const logger = opts.logger ?? createLogger(config.server.log_level);
  const loaded = loadPlugins(config.plugins, config.baseDir);
  const store = opts.store ?? (await openStore(config.store, { redo: true }));
  if (!opts.store) store.maintain(config.store, logger);
  const metrics = new Registry();
  const router = new Router();
  const stateBackend =
    config.shared_state.driver === 'redis' && config.shared_state.url
      ? redisBackend(config.shared_state.url, config.shared_state.key_prefix)
      : storeBackend(store);
  const services: PluginServices = {
    config,
    store,
    logger,
    models: new ModelRegistry(config),
    transport: new Transport(),
    metrics,
    router,
    shared: sharedServices(),
    ...coreExtensions(),
    state: scopedState(stateBackend, 'core'),
    attemptGuards: new AttemptGuards(),
  };
  const lifecycle = new Lifecycle();
  const instances = await setupPlugins(loaded, services, stateBackend);
  // The configured adapters load now (plugins have registered theirs), the others never.
  for (const p of config.providers) getAdapter(p.type);

  router.get('/health', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/ready', async (ctx) => {
    try {
      await store.ping();
      const checks = (services.shared.get(READINESS) ?? []).map((c) => c());
      const degraded = checks.some((c) => c.status !== 'ok');
      ctx.body = { status: degraded ? 'degraded' : 'ready', store: store.driver, ...(checks.length ? { checks } : {}) };
    } catch {
      ctx.status = 503;
      ctx.body = { status: 'unavailable', store: store.driver };
    }
  });
  const guard = services.shared.get(MODELS_GUARD) ?? (async () => undefined);
  registerModelRoutes(router, services.models, guard, services.shared.get(MODELS_FILTER));
  const chain = compose(
    instances.flatMap((i) =>
      i.instance.middleware
        ? [{ name: i.name, middleware: i.instance.middleware.bind(i.instance) as GatewayMiddleware }]
        : [],
    ),
    services.shared.get(PLUGIN_TIMER),
    (err) =>
      logger.error(
        { plugin: err.details?.plugin, detail: err.details?.detail },
        'a plugin broke the middleware contract',
      ),
  );
  const handler = chatHandler({
    config,
    models: services.models,
    logger,
    lifecycle,
    chain,
    authenticate: getAuthenticate(services.shared),
  });
  router.post(CHAT_ROUTE, (ctx) => handler(ctx as unknown as GatewayContext));
  registerOperationRoutes(router, {
    config,
    models: services.models,
    logger,
    lifecycle,
    chain,
    shared: services.shared,
    store,
    authenticate: getAuthenticate(services.shared),
  });

  const httpObserver = services.shared.get(HTTP_OBSERVER);
  const app = new Koa();
  app.proxy = false;
  jsonBodiesWithoutWebGlobals(app);
  const idleGc = startIdleGc();
  const access = accessLogger(logger);
  // `early`: X-Request-Id is set before the route runs. The chat route's fast path leaves it to whatever writes the
  // answer (the completion, the stream, or an error below), so that its head is written in one call (see chat.ts).
  const handle =
    (early: boolean): Koa.Middleware =>
    async (ctx, next) => {
      activity.requests++;
      const started = process.hrtime.bigint();
      const incoming = ctx.req.headers['x-request-id'];
      const requestId = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomId('req_');
      ctx.state.requestId = requestId;
      if (early) ctx.res.setHeader('X-Request-Id', requestId);
      try {
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
        }
      } finally {
        const ms = Number(process.hrtime.bigint() - started) / 1e6;
        httpObserver?.(
          (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched',
          ctx.method,
          ctx.respond === false ? ctx.res.statusCode : ctx.status,
          ms / 1000,
        );
        const s = ctx.state.gateway as GatewayContext['state']['gateway'] | undefined;
        access({
          requestId,
          method: ctx.method,
          path: ctx.path,
          status: ctx.respond === false ? ctx.res.statusCode : ctx.status,
          ms: Math.round(ms * 1000) / 1000,
          model: s?.model.id,
          key: s?.principal?.keyLabel,
        });
      }
    };
  const chatRoute = (ctx: Koa.Context) => {
    (ctx as { _matchedRoute?: string })._matchedRoute = CHAT_ROUTE;
    return handler(ctx as unknown as GatewayContext);
  };
  const outer = handle(true);
  const outerFast = handle(false);
  app.use(outer);
  // The hot route skips the router's matching (the router still has it, for other spellings and 405s).
  app.use((ctx, next) => (ctx.method !== 'POST' || ctx.path !== CHAT_ROUTE ? next() : chatRoute(ctx)));
  app.use(router.routes());
  app.use(router.allowedMethods());
  app.on('error', () => undefined); // errors are handled and logged above
  const koaListener = app.callback();
  // The hot route, spelt exactly, skips Koa's request handling (its finish watcher, compose and respond):
  // the same context and the same outer middleware; the handler writes the answer, this an error.
  const listener: RequestListener = (req, res) => {
    if (req.method !== 'POST' || req.url !== CHAT_ROUTE) return void koaListener(req, res);
    const ctx = app.createContext(req, res);
    res.statusCode = 404;
    outerFast(ctx, () => chatRoute(ctx)).then(
      () => writeKoaBody(ctx),
      () => (res.headersSent ? res.destroy() : res.writeHead(500).end()),
    );
  };

  return {
    app,
    listener,
    services,
    lifecycle,
    async close() {
      idleGc.stop();
      for (const i of [...instances].reverse()) await i.instance.close?.();
      await services.transport.close();
      await stateBackend.close();
      if (!opts.store) await store.close();
    },
  };
}

/** What Koa's respond does for the chat route's error bodies (JSON objects, or text with its type set). */
function writeKoaBody(ctx: Koa.Context): void {
  if (ctx.respond === false || ctx.headerSent || !ctx.writable) return;
  const body: unknown = ctx.body;
  if (body === undefined || body === null) return void ctx.res.end();
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  ctx.length = Buffer.byteLength(text);
  ctx.res.end(text);
}

/** The one place errors are written: problem+json under /responses, the OpenAI error object elsewhere. */
export function respondError(ctx: Koa.Context, err: GatewayError): void {
  ctx.status = err.status;
  if (err.retryAfter !== undefined) ctx.set('Retry-After', String(Math.ceil(err.retryAfter)));
  if (ctx.path === '/responses' || ctx.path.startsWith('/responses/')) {
    ctx.type = 'application/problem+json';
    ctx.body = JSON.stringify(toProblem(err));
  } else {
    ctx.body = toOpenAIBody(err);
  }
}
