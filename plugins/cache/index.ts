/**
 * @module
 * The cache plugin: a response cache that is exact, isolated and honestly billed. A request the operator lets it
 * serve (model, key, Cache-Control, determinism: policy.ts) is looked up by a digest of everything that changes its
 * answer (key.ts); a hit is answered from the entry, plain or as a stream (entry.ts), with no upstream call, and
 * billed `charge` by credit; a miss's answer is stored (middleware.ts) in the store or Redis (backends/). Purges and
 * key/account settings through the admin API (routes.ts) and the CLI (cli.ts). Opt-in semantic matching per model
 * (semantic.ts). See README.md.
 *
 * @example
 * ```yaml
 * plugins:
 *   - auth
 *   - limits
 *   - credit
 *   - storage
 *   - cache:                      # after credit and storage, before routing
 *       backend: store            # store (SQLite/PostgreSQL) | redis (redis.url)
 *       ttl_seconds: 3600
 *       max_entry_bytes: 1048576
 *       scope: account            # account | global (every account shares entries)
 *       models: ['mock/*']        # ids or globs; none by default
 *       non_deterministic_models: []  # also cache temperature > 0, n > 1, tools on these
 *       charge: free              # free | full | a fraction, e.g. 0.1
 *       count_rate_limits: false
 *   - routing
 * ```
 */
import { ADMIN_GUARD, adminSections, definePlugin } from '../../src/plugin';
import { RedisBackend } from './backends/redis-backend';
import { StoreBackend } from './backends/store-backend';
import type { CacheBackend } from './backends/types';
import { cacheCommands } from './cli';
import { cacheMetrics } from './metrics';
import { cacheMiddleware } from './middleware';
import { ModelRules, semanticOf } from './policy';
import { registerCacheRoutes } from './routes';
import { cacheSection } from './section';
import { chargeFraction, configSchema, type CacheConfig } from './schema';
import { cacheMigrations } from './store/migrations';
import { CacheSettings } from './store/settings';

export default definePlugin<CacheConfig>({
  name: 'cache',
  description: 'Response cache: exact match, per account, billed as configured; purge by key, account, model, age.',
  // A hit is still authenticated, limited and metered: it comes after those, and after storage (a hit is stored too).
  after: ['auth', 'limits', 'credit', 'storage'],
  configSchema,
  cli: { commands: cacheCommands },
  store: { migrations: cacheMigrations },
  async setup(config, services) {
    const { logger, store } = services;
    const settings = new CacheSettings(store.db);
    await settings.start(config.settings_refresh_ms, (e) => logger.warn({ err: e }, 'cache: settings not read'));
    let backend: CacheBackend;
    if (config.backend === 'redis') {
      const redis = new RedisBackend({ ...config.redis, timeoutMs: config.redis.timeout_ms });
      await redis.connect(2000);
      backend = redis;
    } else backend = new StoreBackend(store.db);
    const sweeper =
      backend.sweep && config.sweep_interval_ms > 0
        ? setInterval(() => void backend.sweep?.(Date.now()).catch(() => undefined), config.sweep_interval_ms)
        : undefined;
    sweeper?.unref();
    const admin = services.shared.get(ADMIN_GUARD);
    if (admin) registerCacheRoutes(services.router, store, admin, backend, settings);
    adminSections(services.shared).register(cacheSection(backend, settings));
    const rules = new ModelRules(config, services.models);
    // No model cached: no step on the chain (a plugin without middleware costs a request nothing); routes stay.
    const middleware = rules.any
      ? cacheMiddleware({
          rules,
          settings,
          backend,
          metrics: cacheMetrics(services.metrics),
          logger,
          keysIn: config.keys === 'in',
          global: config.scope === 'global',
          ttlMs: config.ttl_seconds * 1000,
          maxBytes: config.max_entry_bytes,
          charge: chargeFraction(config.charge),
          countsLimits: config.count_rate_limits,
          semantic: semanticOf(config),
        })
      : undefined;
    return {
      middleware,
      async close() {
        clearInterval(sweeper);
        settings.close();
        await backend.close();
      },
    };
  },
});
