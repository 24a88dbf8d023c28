import type Koa from 'koa';
import {
  AUTHENTICATE_KEY,
  bodyReader,
  definePlugin,
  errors,
  FORGET_KEY,
  fromNano,
  getAuthenticate,
  type ForgetKey,
} from '../../src/plugin';
import { bodies } from './generated/bodies';
import { loadAssets, type Asset } from './assets';
import { registerKeyRoutes } from './api-keys';
import { registerUsageRoutes } from './api-usage';
import { serveActivity } from './activity';
import { Sessions } from './session';
import { UsageRepo } from './usage';
import { consoleMigrations } from './store/migrations';

export interface ConsoleConfig {
  /** auto: on when the gateway listens on a loopback address only; true/false: always on / off. */
  enabled: 'auto' | boolean;
  session_ttl_hours: number;
  /** How often generation records are rolled up into the daily aggregates. */
  rollup_interval_ms: number;
  /** Records younger than this are left to the next roll-up (a record may commit a little after its created_at). */
  rollup_lag_ms: number;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;
const readSignIn = bodyReader<{ key: string }>(bodies.signIn);

/** The console's Content-Security-Policy: everything from its own origin, nothing framed, forms post only to it. */
const CSP = [
  "default-src 'self'",
  "img-src 'self' data:",
  "style-src 'self'",
  "script-src 'self'",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

/** Headers on every console answer: no framing, no third-party anything, no caching of data. */
function secure(ctx: Koa.Context): void {
  ctx.set('Content-Security-Policy', CSP);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Frame-Options', 'DENY');
}

/**
 * The operator console at /console (pages: overview, keys, activity, models, rankings) and
 * the usage analytics API (GET /v1/activity, OpenRouter's shape, with CSV export). Sign-in
 * is with the admin key or an account's key; an account sees only its own data. On the
 * chat chain it does nothing.
 */
export default definePlugin<ConsoleConfig>({
  name: 'console',
  description: 'Operator console (/console) and usage analytics (/v1/activity).',
  store: { migrations: consoleMigrations, procedures: require.resolve('./store/procedures') },
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      enabled: { enum: ['auto', true, false], default: 'auto' },
      session_ttl_hours: { type: 'number', exclusiveMinimum: 0, maximum: 720, default: 12 },
      rollup_interval_ms: { type: 'integer', minimum: 100, default: 5000 },
      rollup_lag_ms: { type: 'integer', minimum: 0, default: 10000 },
    },
  },
  async setup(config, services) {
    const { store, router, logger, shared } = services;
    const usage = new UsageRepo(store.db, {
      lagMs: config.rollup_lag_ms,
      maxSpanMs: 6 * 3_600_000,
      // PostgreSQL's replicas record generations too: there every roll-up asks the store.
      ...(store.driver === 'postgres' ? {} : { recorded: () => store.generations.recorded }),
    });
    // In the background, one at a time: a first roll-up over a large history must not hold up the start.
    let rolling: Promise<unknown> | undefined;
    const rollUp = () =>
      (rolling ??= usage
        .rollUp()
        .catch((e: unknown) => logger.error({ err: e }, 'usage roll-up failed'))
        .finally(() => (rolling = undefined)));
    void rollUp();
    const timer = setInterval(() => void rollUp(), config.rollup_interval_ms);
    timer.unref();

    // The analytics API for customers' code, with a Bearer key like every /v1 endpoint.
    router.get('/v1/activity', async (ctx) => {
      const auth = getAuthenticate(shared);
      if (!auth) throw errors.forbidden('auth_not_configured', 'Activity needs the auth plugin');
      await serveActivity(ctx, usage, await auth(ctx));
    });

    const on = config.enabled === 'auto' ? LOOPBACK.test(services.config.server.host) : config.enabled;
    if (!on) {
      logger.info(
        { host: services.config.server.host },
        'console off: the gateway does not listen on loopback only (set console.enabled: true to serve it)',
      );
      return { close: async () => void (clearInterval(timer), await rolling) };
    }

    const sessions = await Sessions.open(store, config.session_ttl_hours * 3_600_000);
    let assets: Promise<Map<string, Asset>> | undefined;
    const need = (ctx: Koa.Context) => (secure(ctx), sessions.require(ctx));

    router.post('/console/api/session', async (ctx) => {
      secure(ctx);
      const check = shared.get(AUTHENTICATE_KEY);
      if (!check) throw errors.forbidden('auth_not_configured', 'The console needs the auth plugin to sign in');
      const origin = ctx.get('origin');
      if (origin && origin !== `${ctx.protocol}://${ctx.host}`)
        throw errors.forbidden('cross_origin_refused', 'Sign in from the console itself');
      const p = await check((await readSignIn(ctx)).key.trim());
      const s = sessions.issue(ctx, {
        keyHash: p.keyHash,
        keyLabel: p.keyLabel,
        accountId: p.accountId,
        isAdmin: p.isAdmin,
      });
      ctx.body = {
        data: {
          is_admin: s.isAdmin,
          account_id: s.isAdmin ? null : s.accountId,
          key_label: s.keyLabel,
          csrf_token: sessions.csrfToken(s),
        },
      };
    });
    router.delete('/console/api/session', async (ctx) => {
      await need(ctx);
      sessions.clear(ctx);
      ctx.body = { data: { signed_out: true } };
    });
    router.get('/console/api/me', async (ctx) => {
      const s = await need(ctx);
      const account = s.isAdmin ? undefined : await store.accounts.get(s.accountId);
      ctx.set('Cache-Control', 'no-store');
      ctx.body = {
        data: {
          is_admin: s.isAdmin,
          key_label: s.keyLabel,
          csrf_token: sessions.csrfToken(s),
          account: account
            ? { id: account.id, name: account.name, credits: fromNano(account.credits), usage: fromNano(account.usage) }
            : null,
        },
      };
    });
    const forget: ForgetKey = (hash) => shared.get(FORGET_KEY)?.(hash);
    registerKeyRoutes(router, store, need, forget);
    registerUsageRoutes(router, { store, usage, models: services.models, shared, need });

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
    return { close: async () => void (clearInterval(timer), await rolling) };
  },
});
