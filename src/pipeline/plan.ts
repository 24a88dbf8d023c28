import type { DeploymentConfig, ModelConfig } from '../config/types';
import type { ModelRegistry } from '../models/registry';
import { promptTokens, type Attempt, type AttemptPlan, type GatewayState } from './state';
import type { DeploymentHealth } from '../deployments/health';
import type { DeploymentMeasures } from '../deployments/measures';
import { orderDeployments } from '../deployments/strategies';
import { readPreferences, type Preferences } from '../deployments/preferences';
import { noProviderMatches, preferDeployments, type Excluded } from '../deployments/prefer';

/** The request's provider preferences (its `provider` object and variant), or null: checked, 400 when wrong. */
export function requestPreferences(s: GatewayState, models: ModelRegistry): Preferences | null {
  if (s.options.provider === undefined && s.variant === undefined) return null;
  return readPreferences(s.options.provider, s.variant, (name) => models.hasProvider(name));
}

/** What a plan needs to order a model's deployments for a request. */
export interface PlanInputs {
  models: ModelRegistry;
  health?: DeploymentHealth;
  measures?: DeploymentMeasures;
  prefs: Preferences | null;
  /** What the preferences left out, across the plan's models (for the refusal when nothing is left). */
  excluded: Excluded;
}

/** A model's deployments in the order to try them: its strategy's, then the request's provider preferences. */
export function deploymentOrder(
  s: GatewayState,
  model: ModelConfig,
  i: PlanInputs,
  request = s.request,
): DeploymentConfig[] {
  const input = () => ({ model, request, promptTokens: promptTokens(s) });
  const strategy = model.routing?.strategy ?? 'weighted';
  const order = orderDeployments(model.deployments, strategy, i.health, Math.random, input);
  if (!i.prefs) return order;
  const { models, health, measures } = i;
  // A plan made without awaiting the others' measurements (routing's or credit's own) reads them for the next one.
  if (measures && (i.prefs.sort === 'latency' || i.prefs.sort === 'throughput')) void measures.fresh();
  const inputs = {
    provider: (name: string) => models.provider(name),
    measures,
    available: health && ((key: string) => health.available(key)),
  };
  return preferDeployments(model, order, i.prefs, inputs, i.excluded);
}

const NOTHING_EXCLUDED: Excluded = new Set();

/**
 * The plan routing makes when no fallback plugin wrote one: each of the model's deployments once, in strategy order
 * (then the request's provider preferences); none left by the preferences is a 404 before any upstream call.
 */
export function defaultPlan(
  state: GatewayState,
  model: ModelConfig,
  models: ModelRegistry,
  health?: DeploymentHealth,
  measures?: DeploymentMeasures,
): AttemptPlan {
  const prefs = requestPreferences(state, models);
  // Without preferences nothing is left out and `excluded` is never read or written: no Set a request.
  const inputs: PlanInputs = { models, health, measures, prefs, excluded: prefs ? new Set() : NOTHING_EXCLUDED };
  const attempts: Attempt[] = deploymentOrder(state, model, inputs).map((deployment) => ({
    model,
    deployment,
    provider: models.provider(deployment.provider),
    request: state.request,
  }));
  if (prefs && attempts.length === 0) throw noProviderMatches(model.id, prefs, inputs.excluded);
  return { attempts };
}
