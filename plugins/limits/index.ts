/**
 * @module
 * The limits plugin: key governance. Model allowlists per key and account; rate limits (requests/min, tokens/min,
 * concurrent requests) per key, account, model and key x model, counted in this process or in Redis for every
 * replica (counters.ts), once a request (middleware.ts) and once an upstream attempt (guard.ts); budget notices
 * (alerts.ts); failed-authentication throttling (auth-throttle.ts); a key made from another no looser than it
 * (inherit.ts); the admin API's limit settings and the models filter (routes.ts); `keys limits` and `accounts
 * limits` (cli.ts). See README.md.
 *
 * @example
 * ```yaml
 * plugins:
 *   - auth
 *   - fallback
 *   - limits:
 *       store: memory              # redis: shared by every replica (atomic Lua scripts)
 *       redis: { url: redis://127.0.0.1:6379, prefix: "gw:limits:", timeout_ms: 5000 }
 *       fail_mode: open            # Redis unreachable: open = each replica counts alone, closed = 429
 *       window_ms: 60000           # the trailing window of rpm and tpm
 *       settings_cache_ms: 2000    # how long a key's/account's allowlist and limits are cached per replica
 *       key:     { rpm: 0, tpm: 0, concurrency: 32 }    # defaults for every key (0 = no limit)
 *       account: { rpm: 0, tpm: 0, concurrency: 64 }    # defaults for every account
 *       models: { "anthropic/*": { rpm: 500, tpm: 400000 } }     # per model, across all keys (ids or globs)
 *       key_models: { "mock/streaming-slow": { concurrency: 4 } } # per key x model defaults
 *       plans: { pro: { key: { rpm: 600 }, account: { tpm: 2000000 } } }
 *       auth_failures: { max: 20, window_ms: 60000 }    # per client address; 0 = off
 *       alerts: { key_limit_percent: [50, 80, 100], account_balance_below: [5, 1] }
 *   - credit
 *   - routing
 * ```
 */
import {
  addReadinessCheck,
  ADMIN_GUARD,
  AUTH_THROTTLE,
  definePlugin,
  MAIL_SMTP,
  MODELS_FILTER,
  type Attempt,
  type GatewayState,
} from '../../src/plugin';
import { BudgetAlerts } from './alerts';
import { failedAuthThrottle } from './auth-throttle';
import { limitsCommands } from './cli';
import { Admitter, openCounters } from './counters';
import { limitsGuard } from './guard';
import { offerInheritance } from './inherit';
import { limitsMetrics } from './metrics';
import { limitsMiddleware } from './middleware';
import { modelsFilter, registerLimitRoutes } from './routes';
import { configSchema, type LimitsConfig } from './schema';
import { Governance } from './scopes';
import { limitsMigrations } from './store/migrations';
import { LimitSettingsRepo } from './store/repo';

export default definePlugin<LimitsConfig>({
  name: 'limits',
  description: 'Rate limits, concurrency limits and model allowlists per key/account/model; budget alerts.',
  requires: ['principal'],
  provides: ['limits'],
  // Limits count what the plan will call: fallback writes it first when it is in the chain.
  after: ['fallback'],
  configSchema,
  cli: { commands: limitsCommands },
  store: { migrations: limitsMigrations },
  async setup(config, services) {
    const { logger, shared } = services;
    const repo = new LimitSettingsRepo(services.store.db);
    const governance = new Governance(repo, config);
    const leaseMs = services.config.server.max_request_timeout_s * 1000 + 60_000;
    const metrics = limitsMetrics(services.metrics);
    const { counters, redis } = await openCounters(config, leaseMs, metrics.storeUp, logger);
    addReadinessCheck(shared, () =>
      !redis || redis.up
        ? { name: 'limits', status: 'ok', detail: `${counters.kind} counters` }
        : { name: 'limits', status: 'degraded', detail: `redis unreachable: failing ${config.fail_mode}` },
    );
    const throttle = failedAuthThrottle(config.auth_failures, redis);
    if (throttle) shared.set(AUTH_THROTTLE, throttle);
    shared.set(MODELS_FILTER, modelsFilter(shared, governance));
    // A key made from another never outgrows it (an OAuth consent's key); what a key may use (the console's models).
    offerInheritance(shared, repo, governance, config);

    // Budget e-mail goes through limits' own SMTP settings, else those another plugin offers (oauth's leak notices),
    // asked when the first notice is sent: that plugin may come later in the chain.
    const smtp = () => config.alerts.smtp ?? shared.get(MAIL_SMTP);
    const alerts = new BudgetAlerts(services.store, repo, config.alerts, smtp, logger);

    // The settings as an admin section (the console's), and their admin routes behind the admin API's check when a
    // plugin offers one (auth, which comes before this plugin: it provides the principal).
    registerLimitRoutes(services.router, services.store, shared, repo, shared.get(ADMIN_GUARD));

    const admitter = new Admitter(counters, redis, config, leaseMs, metrics);
    const preAdmitted = new WeakMap<GatewayState, Attempt>();
    services.attemptGuards.register(limitsGuard({ governance, admitter, preAdmitted }));
    return {
      middleware: limitsMiddleware({ governance, admitter, alerts, models: services.models, shared, preAdmitted }),
      async close() {
        throttle?.close();
        governance.close();
        await alerts.close();
        await counters.close();
        await admitter.local?.close();
      },
    };
  },
});
