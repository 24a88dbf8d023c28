/**
 * @module
 * The fallback plugin's step on the chat chain: write the request's attempt plan (`s.plan`) for routing to run.
 */
import {
  errors,
  MEASURES,
  noProviderMatches,
  PARAMS_VALIDATE,
  promptTokens,
  requestPreferences,
  type Attempt,
  type AttemptPlan,
  type ChatRequest,
  type DeploymentHealth,
  type GatewayContext,
  type GatewayState,
  type ModelRegistry,
  type Next,
  type PlanInputs,
  type SharedServices,
} from '../../src/plugin';
import { OVERRIDE_FIELDS, overrideTargets } from './overrides';
import { checkFallbackRequest } from './entries';
import { checkAmplification, fallbackSpecs, modelAttempts, resolveModel, retriesFor } from './plan';
import type { SsrfPolicy } from './ssrf';
import type { FallbackConfig } from './schema';

export interface FallbackDeps {
  config: Readonly<FallbackConfig>;
  models: ModelRegistry;
  health: DeploymentHealth;
  shared: SharedServices;
  /** Where an overridden api_base may point. */
  policy: SsrfPolicy;
  backoff: NonNullable<AttemptPlan['backoff']>;
}

/** The attempts of a request that overrides its upstream: the targets it describes, checked, once each. */
async function overrideAttempts(s: GatewayState, models: ModelRegistry, policy: SsrfPolicy): Promise<Attempt[]> {
  const first = s.model.deployments[0];
  const targets = await overrideTargets(
    s.options,
    { provider: models.provider(first.provider), deployment: first },
    policy,
  );
  return (targets ?? []).map((t) => ({
    model: s.model,
    deployment: t.deployment,
    provider: t.provider,
    request: s.request,
    retry: 0,
  }));
}

/**
 * The request's provider preferences (400 when wrong), and the measurements a sort by latency or throughput reads,
 * fresh from the other replicas; nothing read or made beyond one object when the request sends no preferences.
 */
function planInputs(
  s: GatewayState,
  models: ModelRegistry,
  health: DeploymentHealth,
  shared: SharedServices,
): PlanInputs {
  const prefs = requestPreferences(s, models);
  if (!prefs) return { models, health, measures: undefined, prefs, excluded: NONE };
  const measures = prefs.sort === 'latency' || prefs.sort === 'throughput' ? shared.get(MEASURES) : undefined;
  return { models, health, measures, prefs, excluded: new Set() };
}

/** The exclusions of a request without preferences: none is ever added (preferDeployments is not called). */
const NONE: Set<string> = new Set();

export function fallbackMiddleware({ config, models, health, shared, policy, backoff }: FallbackDeps) {
  return async function fallback(ctx: GatewayContext, next: Next): Promise<void> {
    const s = ctx.state.gateway;
    const o = s.options;
    checkAmplification(o, config);
    const overriding = OVERRIDE_FIELDS.some((f) => o[f] !== undefined);
    if (overriding && !config.overrides.allow) {
      throw errors.forbidden(
        'override_not_allowed',
        `This gateway does not allow per-request ${OVERRIDE_FIELDS.filter((f) => o[f] !== undefined).join(', ')}`,
      );
    }
    const specs = fallbackSpecs(o, s.model);
    const inputs = planInputs(s, models, health, shared);
    const fresh = inputs.measures?.fresh();
    if (fresh) await fresh;

    const contextDict = (o.context_window_fallback_dict as Record<string, string> | undefined) ?? {};
    const contextId = contextDict[s.model.id] ?? s.model.routing?.context_window_fallback;
    const contextModel = contextId ? resolveModel(models, contextId, 'context_window_fallback_dict') : undefined;
    const contextAttempts = contextModel
      ? modelAttempts(
          inputs,
          contextModel,
          { ...s.request, model: contextModel.id },
          retriesFor(s, contextModel, config),
          s,
        )
      : undefined;

    let attempts: Attempt[];
    if (overriding) attempts = await overrideAttempts(s, models, policy);
    // The gateway's own count already says the prompt does not fit: go to the larger model at once.
    else if (contextAttempts && promptTokens(s) > s.model.context_length) attempts = contextAttempts;
    else attempts = modelAttempts(inputs, s.model, s.request, retriesFor(s, s.model, config), s);
    for (const [i, f] of specs.entries()) {
      const m = resolveModel(models, f.id, f.param);
      const request = { ...s.request, ...f.overrides, model: m.id } as ChatRequest;
      checkFallbackRequest(shared.get(PARAMS_VALIDATE), request, f.overrides, i, m);
      attempts.push(...modelAttempts(inputs, m, request, retriesFor(s, m, config), s));
    }
    // The provider preferences left no deployment of any model: refused before any upstream call.
    if (inputs.prefs && attempts.length === 0 && !overriding)
      throw noProviderMatches(s.model.id, inputs.prefs, inputs.excluded);
    // Attempts past the cap are never made; the guards refuse what a key may not use (limits prunes them first).
    // Written out, not spread in (docs/decisions/0031-plugin-hot-path-shapes.md).
    const plan: AttemptPlan = { attempts: attempts.slice(0, config.max_attempts), backoff };
    plan.maxAttempts = config.max_attempts;
    if (contextAttempts) plan.contextFallback = contextAttempts;
    s.plan = plan;
    await next();
  };
}
