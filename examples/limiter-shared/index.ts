/**
 * A per-key request limiter whose count holds across every replica of the gateway: it counts
 * in `services.state` (the shared store, or Redis where the operator configured it), so two
 * replicas admit `limit` requests per window between them, not `limit` each.
 * Written only against the public API: `model-gateway/plugin`.
 */
import { definePlugin, errors, pluginCode } from 'model-gateway/plugin';

interface LimiterConfig {
  /** Requests per key per window. */
  limit: number;
  window_seconds: number;
}

export default definePlugin<LimiterConfig, ['principal']>({
  name: 'limiter-shared',
  description: 'Requests per key per window, counted across replicas.',
  requires: ['principal'],
  configSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['limit'],
    properties: {
      limit: { type: 'integer', minimum: 1 },
      window_seconds: { type: 'integer', minimum: 1, default: 60 },
    },
  },
  setup(config, services) {
    const windowMs = config.window_seconds * 1000;
    return {
      async middleware(ctx, next) {
        // `requires: ['principal']` makes the principal present in the type: no `?.` needed.
        const key = ctx.state.gateway.principal.keyHash;
        const { value, resetAt } = await services.state.increment(`key:${key}`, 1, windowMs);
        if (value > config.limit) {
          const wait = Math.max(1, Math.ceil((resetAt - Date.now()) / 1000));
          throw errors.rateLimited(
            pluginCode('key_request_limit'),
            `This key may make ${config.limit} requests per ${config.window_seconds} s; retry in ${wait} s`,
            wait,
          );
        }
        ctx.set('X-Limiter-Remaining', String(config.limit - value));
        await next();
      },
    };
  },
});
