/**
 * @module
 * The auth plugin: `Authorization: Bearer <key>` on the chat chain. It provides the caller (`principal`) to later
 * plugins, the `authenticate` function to the other endpoints (`auth.authenticate`, `admin.guard`), and the admin
 * API (routes.ts). See README.md.
 *
 * @example
 * ```yaml
 * plugins:
 *   - auth:
 *       protect_models: false   # true: GET /v1/models needs a key too
 *       cache_ttl_ms: 2000      # a disabled or deleted key stops working on every replica within this bound
 *       cache_max_entries: 100000
 *       bootstrap: { account: local, credits: 10 }   # first start only: an account and a key, printed once
 *   - routing
 * ```
 */
import {
  addListeningHook,
  ADMIN_GUARD,
  AUTHENTICATE,
  AUTHENTICATE_KEY,
  definePlugin,
  FORGET_KEY,
  MODELS_GUARD,
  type RouteGuard,
} from '../../src/plugin';
import { Authenticator, oneAnswerARequest } from './authenticator';
import { adminKeyHash, bootstrapAccount } from './admin-key';
import { adminGuard, registerAdminRoutes } from './routes';
import { authMiddleware } from './middleware';
import { configSchema, type AuthConfig } from './schema';

/**
 * First-start keys go to the terminal (stderr), set apart by blank lines, never into the
 * JSON log stream on stdout that log collectors read.
 */
const printSecret = (line: string) => void process.stderr.write(`\n${line}\n`);

export default definePlugin<AuthConfig>({
  name: 'auth',
  description: 'API keys: authenticates chat requests, serves the admin and key endpoints.',
  provides: ['principal'],
  configSchema,
  async setup(config, services) {
    const { hash: adminHash, persist } = await adminKeyHash(
      services.store,
      services.config.server.admin_key,
      printSecret,
    );
    // A first start's keys are made once the gateway listens: a start that fails before then leaves none unseen.
    if (persist) addListeningHook(services.shared, persist);
    const auth = new Authenticator(services.store, {
      cacheTtlMs: config.cache_ttl_ms,
      cacheMax: config.cache_max_entries,
      adminHash,
    });
    auth.authenticate = oneAnswerARequest(auth.authenticate, services.shared);
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
    const { bootstrap } = config;
    if (bootstrap) addListeningHook(services.shared, () => bootstrapAccount(services.store, bootstrap, printSecret));
    return { middleware: authMiddleware(auth) };
  },
});
