/**
 * @module
 * The pieces of a request's attempt plan: one model's attempts, the retries it gets, the fallback models the request
 * (or the model) names, and the request's limits on fan-out.
 */
import {
  deploymentOrder,
  errors,
  type Attempt,
  type ChatRequest,
  type GatewayState,
  type ModelConfig,
  type ModelRegistry,
  type PlanInputs,
} from '../../src/plugin';
import { entryOverrides } from './entries';
import type { FallbackConfig } from './schema';

/** A fallback model as the request (or the model's config) named it, with where it was named for errors. */
export interface FallbackSpec {
  id: string;
  overrides: Record<string, unknown>;
  param: string;
}

/** The configured model `id`, or a 400 naming `param`. */
export function resolveModel(models: ModelRegistry, id: string, param: string): ModelConfig {
  const m = models.get(id);
  if (!m)
    throw errors.invalidRequest(
      `${param} names the model '${id.slice(0, 200)}', which does not exist`,
      param,
      'model_not_found',
    );
  return m;
}

/**
 * One model's attempts: its deployments in strategy order (then the request's provider preferences), cycled through
 * for 1 + retries tries.
 */
export function modelAttempts(
  inputs: PlanInputs,
  model: ModelConfig,
  request: ChatRequest,
  retries: number,
  s: GatewayState,
): Attempt[] {
  const order = deploymentOrder(s, model, inputs, request);
  if (order.length === 0) return [];
  const { models, prefs } = inputs;
  // Provider preferences with fallbacks allowed try each admitted provider in turn, as OpenRouter does.
  const tries = prefs?.allowFallbacks ? Math.max(1 + retries, order.length) : 1 + retries;
  return Array.from({ length: tries }, (_, retry) => {
    const deployment = order[retry % order.length];
    return { model, deployment, provider: models.provider(deployment.provider), request, retry };
  });
}

/** Retries for model `m`: the request's `num_retries`, else the model's, else the plugin's. */
export function retriesFor(s: GatewayState, m: ModelConfig, config: Readonly<FallbackConfig>): number {
  return typeof s.options.num_retries === 'number'
    ? s.options.num_retries
    : (m.routing?.num_retries ?? config.num_retries);
}

/** A request may not ask for more retries or fallback models than the operator allows (amplification). */
export function checkAmplification(o: GatewayState['options'], config: Readonly<FallbackConfig>): void {
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
      throw errors.invalidRequest(`${field} may name at most ${most} models on this gateway`, field, 'too_many_items');
  }
}

/**
 * Fallback models: the request's `fallbacks` (names or {model, ...parameter overrides}), OpenRouter's `models`, else
 * the model's own.
 */
export function fallbackSpecs(o: GatewayState['options'], model: ModelConfig): FallbackSpec[] {
  const specs: FallbackSpec[] = [];
  if (Array.isArray(o.fallbacks)) {
    (o.fallbacks as Array<string | Record<string, unknown>>).forEach((f, i) => {
      if (typeof f === 'string') specs.push({ id: f, overrides: {}, param: `fallbacks[${i}]` });
      else specs.push({ id: String(f.model), overrides: entryOverrides(f, i), param: `fallbacks[${i}].model` });
    });
  } else if (Array.isArray(o.models)) {
    (o.models as string[]).forEach(
      (id, i) => id !== model.id && specs.push({ id, overrides: {}, param: `models[${i}]` }),
    );
  } else
    for (const id of model.routing?.fallbacks ?? [])
      specs.push({ id, overrides: {}, param: `models.${model.id}.routing.fallbacks` });
  return specs;
}
