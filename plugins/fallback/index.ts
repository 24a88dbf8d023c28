import {
  definePlugin,
  DeploymentHealth,
  errors,
  HEALTH,
  orderDeployments,
  PARAMS_VALIDATE,
  promptTokens,
  type Attempt,
  type AttemptPlan,
  type ChatRequest,
  type GatewayState,
  type HealthOptions,
  type ModelConfig,
} from '../../src/plugin';
import { OVERRIDE_FIELDS, overrideTargets } from './overrides';
import { checkFallbackRequest, entryOverrides } from './entries';

export interface FallbackConfig {
  /** Retries per model when neither the request (`num_retries`) nor the model says. */
  num_retries: number;
  /** The most retries a request may ask for (`num_retries`): beyond it, a 400. */
  max_retries: number;
  /** The most fallback models a request may name (`fallbacks`, `models`): beyond it, a 400. */
  max_fallbacks: number;
  /** The most upstream calls one request makes, retries and fallbacks included: the plan stops there. */
  max_attempts: number;
  backoff_base_ms: number;
  backoff_max_ms: number;
  /** An upstream's Retry-After is honoured up to this. */
  retry_after_max_ms: number;
  cooldown: HealthOptions;
  overrides: {
    /** Allow per-request api_base / api_key / api_version / deployment_id / model_list at all. */
    allow: boolean;
    /** Hosts or URL prefixes an overridden api_base may use. */
    api_base_allowlist: string[];
    /** Private CIDRs an overridden api_base may resolve to (e.g. an on-premises server). */
    allow_private: string[];
  };
}

/**
 * Plans the request's attempts for routing: the model's deployments in its strategy's
 * order, retried up to num_retries, then each fallback model (`fallbacks`, OpenRouter's
 * `models`, or the model's configured ones) in turn; a context-window fallback used at
 * once when the prompt is too long. Also applies (or refuses) per-request overrides.
 */
export default definePlugin<FallbackConfig>({
  name: 'fallback',
  description: 'Retries, fallbacks, routing strategies, cooldowns and safe per-request overrides.',
  provides: ['plan'],
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      num_retries: { type: 'integer', minimum: 0, maximum: 10, default: 2 },
      max_retries: { type: 'integer', minimum: 0, maximum: 10, default: 5 },
      max_fallbacks: { type: 'integer', minimum: 0, maximum: 50, default: 5 },
      max_attempts: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
      backoff_base_ms: { type: 'integer', minimum: 0, default: 200 },
      backoff_max_ms: { type: 'integer', minimum: 0, default: 5000 },
      retry_after_max_ms: { type: 'integer', minimum: 0, default: 30000 },
      cooldown: {
        type: 'object',
        additionalProperties: false,
        default: {},
        properties: {
          failures: { type: 'integer', minimum: 1, default: 3 },
          window_ms: { type: 'integer', minimum: 1, default: 60000 },
          cooldown_ms: { type: 'integer', minimum: 1, default: 30000 },
        },
      },
      overrides: {
        type: 'object',
        additionalProperties: false,
        default: {},
        properties: {
          allow: { type: 'boolean', default: false },
          api_base_allowlist: { type: 'array', items: { type: 'string', minLength: 1 }, default: [] },
          allow_private: {
            type: 'array',
            items: { type: 'string', pattern: '^[0-9a-fA-F:.]+(/[0-9]{1,3})?$' },
            default: [],
          },
        },
      },
    },
  },
  setup(config, services) {
    const { models } = services;
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

    const resolve = (id: string, param: string): ModelConfig => {
      const m = models.get(id);
      if (!m)
        throw errors.invalidRequest(
          `${param} names the model '${id.slice(0, 200)}', which does not exist`,
          param,
          'model_not_found',
        );
      return m;
    };

    /** One model's attempts: its deployments in strategy order, cycled through for 1 + retries tries. */
    const group = (model: ModelConfig, request: ChatRequest, retries: number, s: GatewayState): Attempt[] => {
      const input = () => ({ model, request, promptTokens: promptTokens(s) });
      const order = orderDeployments(
        model.deployments,
        model.routing?.strategy ?? 'weighted',
        health,
        Math.random,
        input,
      );
      if (order.length === 0) return [];
      return Array.from({ length: 1 + retries }, (_, retry) => {
        const deployment = order[retry % order.length];
        return { model, deployment, provider: models.provider(deployment.provider), request, retry };
      });
    };

    const retriesFor = (s: GatewayState, m: ModelConfig) =>
      typeof s.options.num_retries === 'number'
        ? s.options.num_retries
        : (m.routing?.num_retries ?? config.num_retries);

    /** A request may not ask for more retries or fallback models than the operator allows (amplification). */
    const checkAmplification = (o: GatewayState['options']) => {
      if (typeof o.num_retries === 'number' && o.num_retries > config.max_retries)
        throw errors.invalidRequest(
          `num_retries may be at most ${config.max_retries} on this gateway`,
          'num_retries',
          'invalid_value',
        );
      for (const field of ['fallbacks', 'models'] as const) {
        const list = o[field];
        // `models` names the requested model too.
        const most = config.max_fallbacks + (field === 'models' ? 1 : 0);
        if (Array.isArray(list) && list.length > most)
          throw errors.invalidRequest(
            `${field} may name at most ${most} models on this gateway`,
            field,
            'too_many_items',
          );
      }
    };

    return {
      async middleware(ctx, next) {
        const s = ctx.state.gateway;
        const o = s.options;
        checkAmplification(o);
        const overriding = OVERRIDE_FIELDS.some((f) => o[f] !== undefined);
        if (overriding && !config.overrides.allow) {
          throw errors.forbidden(
            'override_not_allowed',
            `This gateway does not allow per-request ${OVERRIDE_FIELDS.filter((f) => o[f] !== undefined).join(', ')}`,
          );
        }

        // Fallback models: the request's `fallbacks` (names or {model, ...parameter overrides}), OpenRouter's `models`,
        // else the model's own.
        const fallbackSpecs: Array<{ id: string; overrides: Record<string, unknown>; param: string }> = [];
        if (Array.isArray(o.fallbacks)) {
          (o.fallbacks as Array<string | Record<string, unknown>>).forEach((f, i) => {
            if (typeof f === 'string') fallbackSpecs.push({ id: f, overrides: {}, param: `fallbacks[${i}]` });
            else
              fallbackSpecs.push({
                id: String(f.model),
                overrides: entryOverrides(f, i),
                param: `fallbacks[${i}].model`,
              });
          });
        } else if (Array.isArray(o.models)) {
          (o.models as string[]).forEach(
            (id, i) => id !== s.model.id && fallbackSpecs.push({ id, overrides: {}, param: `models[${i}]` }),
          );
        } else
          for (const id of s.model.routing?.fallbacks ?? [])
            fallbackSpecs.push({ id, overrides: {}, param: `models.${s.model.id}.routing.fallbacks` });

        const contextDict = (o.context_window_fallback_dict as Record<string, string> | undefined) ?? {};
        const contextId = contextDict[s.model.id] ?? s.model.routing?.context_window_fallback;
        const contextModel = contextId ? resolve(contextId, 'context_window_fallback_dict') : undefined;
        const contextAttempts = contextModel
          ? group(contextModel, { ...s.request, model: contextModel.id }, retriesFor(s, contextModel), s)
          : undefined;

        let attempts: Attempt[];
        if (overriding) {
          const first = s.model.deployments[0];
          const targets = await overrideTargets(
            o,
            { provider: models.provider(first.provider), deployment: first },
            policy,
          );
          attempts = (targets ?? []).map((t) => ({
            model: s.model,
            deployment: t.deployment,
            provider: t.provider,
            request: s.request,
            retry: 0,
          }));
        } else if (contextAttempts && promptTokens(s) > s.model.context_length) {
          // The gateway's own count already says the prompt does not fit: go to the larger model at once.
          attempts = contextAttempts;
        } else {
          attempts = group(s.model, s.request, retriesFor(s, s.model), s);
        }
        for (const [i, f] of fallbackSpecs.entries()) {
          const m = resolve(f.id, f.param);
          const request = { ...s.request, ...f.overrides, model: m.id } as ChatRequest;
          checkFallbackRequest(services.shared.get(PARAMS_VALIDATE), request, f.overrides, i, m);
          attempts.push(...group(m, request, retriesFor(s, m), s));
        }
        // Written out, not spread in: a spread after the literal's own fields is a runtime call a property.
        // Attempts past the cap are never made; the guards refuse what a key may not use (limits prunes them first).
        const plan: AttemptPlan = { attempts: attempts.slice(0, config.max_attempts), backoff };
        plan.maxAttempts = config.max_attempts;
        if (contextAttempts) plan.contextFallback = contextAttempts;
        s.plan = plan;
        await next();
      },
    };
  },
});
