/**
 * @module
 * The fallback plugin: plans the request's attempts for routing (middleware.ts, plan.ts): the model's deployments in
 * its strategy's order, retried up to num_retries, then each fallback model (`fallbacks`, OpenRouter's `models`, or
 * the model's configured ones) in turn; a context-window fallback used at once when the prompt is too long. Also
 * applies (or refuses) per-request overrides (overrides.ts, ssrf.ts) and keeps the deployments' health (cooldowns).
 * See README.md.
 *
 * @example
 * ```yaml
 * plugins:
 *   - fallback:
 *       num_retries: 2            # per model, unless the request (num_retries) or the model (routing.num_retries) says
 *       max_retries: 5            # a request's num_retries above this: 400 naming num_retries
 *       max_fallbacks: 5          # more models in a request's fallbacks (or models, besides its own): 400
 *       max_attempts: 10          # upstream calls one request makes at most, retries and fallbacks included
 *       backoff_base_ms: 200
 *       backoff_max_ms: 5000
 *       retry_after_max_ms: 30000
 *       cooldown: { failures: 3, window_ms: 60000, cooldown_ms: 30000 }
 *       overrides: { allow: false, api_base_allowlist: [], allow_private: [] }
 *   - routing
 * ```
 */
import { definePlugin, DeploymentHealth, HEALTH } from '../../src/plugin';
import { fallbackMiddleware } from './middleware';
import { configSchema, type FallbackConfig } from './schema';

export default definePlugin<FallbackConfig>({
  name: 'fallback',
  description: 'Retries, fallbacks, routing strategies, cooldowns and safe per-request overrides.',
  provides: ['plan'],
  configSchema,
  setup(config, services) {
    const health = new DeploymentHealth(config.cooldown, services.metrics);
    services.shared.set(HEALTH, health);
    const policy = {
      allow: config.overrides.api_base_allowlist,
      allowPrivate: config.overrides.allow_private,
      self: { host: services.config.server.host, port: services.config.server.port },
    };
    const backoff = {
      baseMs: config.backoff_base_ms,
      maxMs: config.backoff_max_ms,
      retryAfterMaxMs: config.retry_after_max_ms,
    };
    const deps = { config, models: services.models, health, shared: services.shared, policy, backoff };
    return { middleware: fallbackMiddleware(deps) };
  },
});
