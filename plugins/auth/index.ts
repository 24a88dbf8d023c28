import {
  ADMIN_GUARD,
  AUTH_THROTTLE,
  AUTHENTICATE,
  AUTHENTICATE_KEY,
  callAsync,
  definePlugin,
  errors,
  FORGET_KEY,
  MODELS_GUARD,
  type Principal,
  type RouteGuard,
} from '../../src/plugin';
import type Koa from 'koa';
import { Authenticator } from './authenticator';
import { adminKeyHash, bootstrapAccount } from './admin-key';
import { adminGuard, registerAdminRoutes } from './admin-api';

/** Where a request keeps its authentication (in ctx.state, by a key no other plugin can spell). */
const AUTHENTICATED = Symbol('auth.authenticated');
interface Authenticated {
  /** The Authorization header it was for. */
  header: string;
  principal: Promise<Principal>;
}

/**
 * First-start keys go to the terminal (stderr), set apart by blank lines, never into the
 * JSON log stream on stdout that log collectors read.
 */
const printSecret = (line: string) => void process.stderr.write(`\n${line}\n`);

export interface AuthConfig {
  /** Require a key on GET /v1/models too (public by default). */
  protect_models: boolean;
  /**
   * How long a key lookup is cached (ms): a disabled or deleted key stops working on every replica within this bound.
   */
  cache_ttl_ms: number;
  cache_max_entries: number;
  /** For a first local start: when the store has no account yet, create this one with a key and print the key once. */
  bootstrap?: { account: string; credits: number };
}

/**
 * `Authorization: Bearer <key>` on the chat chain. Provides the caller (`principal`) to
 * later plugins, the `authenticate` function to the other endpoints, and the admin API.
 */
export default definePlugin<AuthConfig>({
  name: 'auth',
  description: 'API keys: authenticates chat requests, serves the admin and key endpoints.',
  provides: ['principal'],
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      protect_models: { type: 'boolean', default: false },
      cache_ttl_ms: { type: 'integer', minimum: 0, maximum: 5000, default: 2000 },
      cache_max_entries: { type: 'integer', minimum: 1, default: 100000 },
      bootstrap: {
        type: 'object',
        additionalProperties: false,
        required: ['account', 'credits'],
        properties: { account: { type: 'string', minLength: 1 }, credits: { type: 'number', minimum: 0 } },
      },
    },
  },
  async setup(config, services) {
    const adminHash = await adminKeyHash(services.store, services.config.server.admin_key, printSecret);
    const auth = new Authenticator(services.store, {
      cacheTtlMs: config.cache_ttl_ms,
      cacheMax: config.cache_max_entries,
      adminHash,
    });
    // Failed-authentication throttling per client address, when a plugin (limits) registered one.
    const plain = auth.authenticate;
    const throttled = (ctx: Koa.Context): Promise<Principal> => {
      const t = services.shared.get(AUTH_THROTTLE);
      if (!t) return plain(ctx);
      return callAsync(() => {
        t.check(ctx.ip);
        return plain(ctx);
      }).catch((e: unknown) => {
        if ((e as { status?: number }).status === 401) t.failed(ctx.ip);
        throw e;
      });
    };
    // One answer a request and header: the chain's middleware asks again what the check before the body asked
    // (src/http/early-auth.ts), and gets that answer, not a second lookup and throttle check. A plugin before this
    // one that changed the header gets the new header checked.
    auth.authenticate = (ctx: Koa.Context) => {
      const header = ctx.get('authorization');
      const state = ctx.state as unknown as Record<symbol, Authenticated | undefined>;
      const seen = state[AUTHENTICATED];
      if (seen !== undefined && seen.header === header) return seen.principal;
      const principal = throttled(ctx);
      state[AUTHENTICATED] = { header, principal };
      return principal;
    };
    services.shared.set(AUTHENTICATE, auth.authenticate);
    services.shared.set(AUTHENTICATE_KEY, (key: string) => auth.fromKey(key));
    services.shared.set(FORGET_KEY, (hash: string) => auth.forget(hash));
    if (config.protect_models) {
      const guard: RouteGuard = async (ctx) => void (await auth.authenticate(ctx));
      services.shared.set(MODELS_GUARD, guard);
    }
    // The admin check, for this plugin's admin API and any other plugin's admin routes (limits').
    const admin = adminGuard(auth);
    services.shared.set(ADMIN_GUARD, admin);
    registerAdminRoutes(services.router, services.store, auth, admin);
    if (config.bootstrap) await bootstrapAccount(services.store, config.bootstrap, printSecret);
    return {
      middleware(ctx, next) {
        // Not an async function: the answer is nearly always the one the check before the body got, settled.
        return auth.authenticate(ctx as unknown as Koa.Context).then((principal) => {
          if (principal.isAdmin)
            throw errors.forbidden(
              'admin_key_not_allowed',
              "The admin key cannot call chat completions; use an account's key",
            );
          ctx.state.gateway.principal = principal;
          return next();
        });
      },
    };
  },
});
