/**
 * @module
 * The console plugin: the operator console at /console (pages: overview, keys, activity, models, rankings, audit
 * log; front end in console/) and the usage analytics API (GET /v1/activity, OpenRouter's shape, with CSV export:
 * activity.ts),
 * over minute and daily aggregates the database keeps as generation records are written (store/rollups.ts: a trigger,
 * in the writing transaction; usage.ts, series.ts). Sign-in is with the
 * admin key, an account's key or single sign-on (OpenID Connect: sso.ts); sessions are server-side records any replica
 * can end (session.ts), each with a role every route checks (admin > operator > viewer > account); an account sees
 * only its own data (routes.ts). It has no step on the
 * chat chain, so no middleware: a request does not pass through it. See README.md.
 *
 * @example
 * ```yaml
 * plugins:
 *   - auth
 *   - console:
 *       enabled: auto             # auto: served when server.host is a loopback address; true / false
 *       session_ttl_hours: 12     # console sign-in lifetime
 *       credit_unit: credits      # the label of money in the console (e.g. USD, EUR, tokens)
 *       sso:                      # optional: single sign-on with OpenID Connect (sso.ts)
 *         issuer: https://login.example.com
 *         client_id: gateway-console
 *         client_secret: ${SSO_CLIENT_SECRET}
 *         role_claim: groups
 *         roles: { gw-admins: admin, gw-operators: operator, gw-viewers: viewer }
 *   - routing
 * ```
 */
import { definePlugin } from '../../src/plugin';
import { registerActivityApi, registerConsoleRoutes } from './routes';
import { configSchema, type ConsoleConfig } from './schema';
import { Sessions } from './session';
import { consoleMigrations } from './store/migrations';
import { UsageRepo } from './usage';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

export default definePlugin<ConsoleConfig>({
  name: 'console',
  description: 'Operator console (/console) and usage analytics (/v1/activity).',
  store: { migrations: consoleMigrations, procedures: require.resolve('./store/procedures') },
  configSchema,
  async setup(config, services) {
    const { store, router, logger, shared } = services;
    const usage = new UsageRepo(store.db);
    registerActivityApi(router, usage, shared);

    const host = services.config.server.host;
    const on = config.enabled === 'auto' ? LOOPBACK.test(host) : config.enabled;
    if (!on) {
      logger.info(
        { host },
        'console off: the gateway does not listen on loopback only (set console.enabled: true to serve it)',
      );
      return {};
    }
    const sessions = new Sessions(store, config.session_ttl_hours * 3_600_000, services.config.server.admin_key);
    registerConsoleRoutes(router, {
      store,
      usage,
      models: services.models,
      shared,
      sessions,
      logger,
      sso: config.sso,
      creditUnit: config.credit_unit,
    });
    return {};
  },
});
