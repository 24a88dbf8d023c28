import Koa from 'koa';
import type { RequestListener } from 'node:http';
import Router from '@koa/router';
import type { Logger } from 'pino';
import { Registry } from './metrics/prom-client';
import type { GatewayConfig } from './config/types';
import { createLogger } from './logger';
import { PresetBook, PRESETS } from './models/presets';
import { ModelRegistry } from './models/registry';
import { loadPlugins, setupPlugins } from './pipeline/loader';
import { compose } from './pipeline/compose';
import { HTTP_OBSERVER, PLUGIN_TIMER, READINESS } from './pipeline/hooks';
import type { GatewayContext, GatewayMiddleware, PluginInstance, PluginServices } from './pipeline/plugin';
import { coreExtensions } from './pipeline/loader';
import { AttemptGuards } from './pipeline/attempt-guards';
import { sharedServices } from './pipeline/shared-services';
import { redisBackend, scopedState, storeBackend, type StateBackend } from './pipeline/shared-state';
import { openStore, type Store } from './store/index';
import { missingExtensions, storeExtensionsOf } from './store/extensions';
import { Transport } from './transport/http';
import { Lifecycle } from './http/lifecycle';
import { startIdleGc } from './http/idle-gc';
import { jsonBodiesWithoutWebGlobals } from './http/json-body';
import { outerMiddleware } from './http/outer';
import { RefusalRecorder } from './http/refusals';
import { fastPathListener } from './http/fast-path';
import { hostCheck } from './http/host-check';
import { chatOperation } from './api/chat';
import { runOperation, type OperationDeps } from './api/run-operation';
import { registerOperationRoutes } from './api/operations';
import { getAdapter } from './providers/registry';
import { registerModelRoutes } from './api/models';
import { ADMIN_GUARD, MODELS_FILTER, MODELS_GUARD, getAuthenticate } from './auth/contract';
import { registerAuditRoutes } from './api/audit';

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

const CHAT_ROUTE = '/v1/chat/completions';

/** The services every plugin is set up with (each plugin gets its own view: see pipeline/loader.ts). */
function coreServices(config: GatewayConfig, store: Store, logger: Logger, stateBackend: StateBackend): PluginServices {
  return {
    config,
    store,
    logger,
    models: new ModelRegistry(config),
    transport: new Transport(),
    metrics: new Registry(),
    router: new Router(),
    shared: sharedServices(),
    ...coreExtensions(),
    state: scopedState(stateBackend, 'core'),
    attemptGuards: new AttemptGuards(),
  };
}

/** GET /health (alive) and GET /ready (the store answers; plugins' own checks may say degraded). */
function registerHealthRoutes(router: Router, store: Store, services: PluginServices): void {
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
}

/** The plugins' middleware as one chain, timed and guarded against onion misuse. */
function buildChain(
  instances: Array<{ name: string; instance: PluginInstance }>,
  services: PluginServices,
  logger: Logger,
): (ctx: GatewayContext) => Promise<void> {
  return compose(
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
}

/** The configured store (or the one a test passes in), checked to hold every plugin's store extension. */
async function openGatewayStore(
  config: GatewayConfig,
  opts: CreateOptions,
  extensions: ReturnType<typeof storeExtensionsOf>,
  logger: Logger,
): Promise<Store> {
  const store = opts.store ?? (await openStore(config.store, { redo: true }, extensions));
  const missing = opts.store ? missingExtensions(opts.store.extensions, extensions) : null;
  if (missing) throw new Error(missing);
  if (!opts.store) store.maintain(config.store, logger);
  return store;
}

/** The routes beside the chat chain: health, models, audit and the other operations. */
function registerCoreRoutes(services: PluginServices, store: Store, deps: OperationDeps): void {
  const { router } = services;
  registerHealthRoutes(router, store, services);
  const guard = services.shared.get(MODELS_GUARD) ?? (async () => undefined);
  registerModelRoutes(router, services.models, guard, services.shared.get(MODELS_FILTER));
  const admin = services.shared.get(ADMIN_GUARD);
  if (admin) registerAuditRoutes(router, store, admin);
  registerOperationRoutes(router, { ...deps, shared: services.shared, store });
}

type ChatHandler = (ctx: GatewayContext) => Promise<void>;

/** The Koa app around the router: the outer middleware, the chat route's shortcut, and the listener's fast path. */
function buildKoa(
  config: GatewayConfig,
  services: PluginServices,
  chat: ChatHandler,
  outer: Parameters<typeof outerMiddleware>[0],
): { app: Koa; listener: RequestListener } {
  const app = new Koa();
  // Behind a proxy the client's address is the last hop the proxy added to X-Forwarded-For; else the socket's.
  app.proxy = config.server.trust_proxy;
  app.maxIpsCount = 1;
  jsonBodiesWithoutWebGlobals(app);
  const chatRoute = (ctx: Koa.Context) => {
    (ctx as { _matchedRoute?: string })._matchedRoute = CHAT_ROUTE;
    return chat(ctx as unknown as GatewayContext);
  };
  app.use(outerMiddleware(outer, true));
  // The hot route skips the router's matching (the router still has it, for other spellings and 405s).
  app.use((ctx, next) => (ctx.method !== 'POST' || ctx.path !== CHAT_ROUTE ? next() : chatRoute(ctx)));
  app.use(services.router.routes());
  app.use(services.router.allowedMethods());
  app.on('error', () => undefined); // errors are handled and logged in the outer middleware
  const route = { method: 'POST', path: CHAT_ROUTE, handle: chatRoute };
  return { app, listener: fastPathListener(app, route, outerMiddleware(outer, false)) };
}

/** Build the Koa app for a validated config: store, plugins, routes. No listen(). */
export async function createApp(config: GatewayConfig, opts: CreateOptions = {}): Promise<Gateway> {
  const logger = opts.logger ?? createLogger(config.server.log_level);
  const loaded = loadPlugins(config.plugins, config.baseDir);
  const store = await openGatewayStore(config, opts, storeExtensionsOf(loaded), logger);
  const stateBackend =
    config.shared_state.driver === 'redis' && config.shared_state.url
      ? redisBackend(config.shared_state.url, config.shared_state.key_prefix)
      : storeBackend(store);
  const services = coreServices(config, store, logger, stateBackend);
  // gateway.yaml's presets; the routing plugin adds the admin API's (src/models/presets.ts).
  const presets = new PresetBook(config.presets);
  services.shared.set(PRESETS, presets);
  const lifecycle = new Lifecycle();
  const instances = await setupPlugins(loaded, services, stateBackend);
  // The configured adapters load now (plugins have registered theirs), the others never.
  for (const p of config.providers) getAdapter(p.type);

  const deps: OperationDeps = {
    config,
    models: services.models,
    logger,
    lifecycle,
    chain: buildChain(instances, services, logger),
    authenticate: getAuthenticate(services.shared),
    presets,
  };
  const chat = runOperation(chatOperation(deps, services.shared), deps);
  services.router.post(CHAT_ROUTE, (ctx) => chat(ctx as unknown as GatewayContext));
  registerCoreRoutes(services, store, deps);

  const idleGc = startIdleGc();
  const refusals = new RefusalRecorder(store, logger);
  const outer = {
    logger,
    lifecycle,
    httpObserver: services.shared.get(HTTP_OBSERVER),
    allowHost: hostCheck(config.server),
    refusals,
  };
  const { app, listener } = buildKoa(config, services, chat, outer);

  return {
    app,
    listener,
    services,
    lifecycle,
    async close() {
      idleGc.stop();
      await refusals.close();
      for (const i of [...instances].reverse()) await i.instance.close?.();
      await services.transport.close();
      await stateBackend.close();
      if (!opts.store) await store.close();
    },
  };
}
