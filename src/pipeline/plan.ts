import type { ModelConfig } from '../config/types';
import type { ModelRegistry } from '../models/registry';
import { promptTokens, type Attempt, type AttemptPlan, type GatewayState } from './state';
import type { DeploymentHealth } from '../deployments/health';
import { orderDeployments } from '../deployments/strategies';

/**
 * The plan routing makes when no fallback plugin wrote one: each of the model's deployments once, in strategy order.
 */
export function defaultPlan(
  state: GatewayState,
  model: ModelConfig,
  models: ModelRegistry,
  health?: DeploymentHealth,
): AttemptPlan {
  const input = () => ({ model, request: state.request, promptTokens: promptTokens(state) });
  const order = orderDeployments(model.deployments, model.routing?.strategy ?? 'weighted', health, Math.random, input);
  const attempts: Attempt[] = order.map((deployment) => ({
    model,
    deployment,
    provider: models.provider(deployment.provider),
    request: state.request,
  }));
  return { attempts };
}
