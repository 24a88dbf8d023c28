/**
 * @module
 * The console plugin's endpoints: the analytics API for customers' code (GET /v1/activity), and the console itself
 * (its front end at /console, and its data API under /console/api: api-session.ts, api-keys.ts, api-usage.ts,
 * api-audit.ts).
 */
import type Router from '@koa/router';
import type Koa from 'koa';
import {
  errors,
  FORGET_KEY,
  getAuthenticate,
  hasRole,
  type ForgetKey,
  type PluginServices,
  type ModelRegistry,
  type SharedServices,
  type Store,
} from '../../src/plugin';
import { serveActivity } from './activity';
import { registerConsoleAudit } from './api-audit';
import { registerKeyRoutes } from './api-keys';
import { registerSettingsRoutes } from './api-settings';
import { registerViewRoutes } from './api-views';
import { registerSessionRoutes } from './api-session';
import { registerUsageRoutes } from './api-usage';
import { loadAssets, type Asset } from './assets';
import { secure } from './secure';
import type { SsoConfig } from './schema';
import type { Sessions } from './session';
import { registerSso, ssoOff } from './sso';
import type { UsageRepo } from './usage';

/** GET /v1/activity: the analytics API for customers' code, with a Bearer key like every /v1 endpoint. */
export function registerActivityApi(router: Router, usage: UsageRepo, shared: SharedServices): void {
  router.get('/v1/activity', async (ctx) => {
    const auth = getAuthenticate(shared);
    if (!auth) throw errors.forbidden('auth_not_configured', 'Activity needs the auth plugin');
    const p = await auth(ctx);
    // A key with the viewer role (or higher) reads every account, like the console's viewer; any other its own.
    await serveActivity(ctx, usage, { isAdmin: hasRole(p, 'viewer'), accountId: p.accountId });
  });
}

export interface ConsoleRouteDeps {
  store: Store;
  usage: UsageRepo;
  models: ModelRegistry;
  shared: SharedServices;
  sessions: Sessions;
  logger: PluginServices['logger'];
  sso: SsoConfig | undefined;
  creditUnit: string;
}

/**
 * The console: sign-in (a key, or single sign-on when `sso` is set), the sessions, its data API (every call behind
 * the session and its role) and its three front-end files.
 */
export function registerConsoleRoutes(router: Router, deps: ConsoleRouteDeps) {
  const { store, usage, models, shared, sessions, logger, sso, creditUnit } = deps;
  const need = (ctx: Koa.Context) => {
    secure(ctx);
    return sessions.require(ctx);
  };
  registerSessionRoutes(router, {
    store,
    shared,
    sessions,
    need,
    sso: { enabled: sso !== undefined },
    creditUnit,
  });
  if (sso) registerSso(router, sso, { store, sessions, logger, need });
  else ssoOff(router);
  const forget: ForgetKey = (hash) => shared.get(FORGET_KEY)?.(hash);
  registerKeyRoutes(router, { store, need, forget, shared });
  registerUsageRoutes(router, { store, usage, models, shared, need });
  registerConsoleAudit(router, store, need);
  // Before the settings routes: /settings/{section}/views/{view} would otherwise read as a subject named `views`.
  registerViewRoutes(router, { shared, need });
  registerSettingsRoutes(router, { store, shared, need });
  registerAssets(router);
}

/**
 * GET /console (and /console/), /console/app.js, /console/app.css: loaded (or bundled) at the first request; any other
 * /console/ page path the app's not-found page (404); GET / a redirect to /console.
 */
function registerAssets(router: Router): void {
  let assets: Promise<Map<string, Asset>> | undefined;
  const serve = async (ctx: Koa.Context, file: string) => {
    secure(ctx);
    assets ??= loadAssets();
    const a = (await assets).get(file);
    if (!a) throw errors.routeNotFound(ctx.method, ctx.path);
    ctx.type = a.type;
    ctx.set('Cache-Control', 'no-cache');
    ctx.body = a.body;
  };
  router.get('/console', (ctx) => serve(ctx, 'index.html'));
  router.get('/console/', (ctx) => serve(ctx, 'index.html'));
  router.get('/console/app.js', (ctx) => serve(ctx, 'app.js'));
  router.get('/console/app.css', (ctx) => serve(ctx, 'app.css'));
  // Any other page path (not the data API): the app, which shows its own not-found page, with a 404.
  router.get(/^\/console\/(?!api\/|api$|sso\/)/, async (ctx) => {
    await serve(ctx, 'index.html');
    ctx.status = 404;
  });
  // The root of a gateway whose console is on: the console (a browser's first visit lands somewhere useful).
  router.get('/', (ctx) => {
    ctx.status = 302;
    ctx.redirect('/console');
  });
}
