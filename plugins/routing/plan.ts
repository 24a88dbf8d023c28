import type { ModelConfig } from '../../src/config/types';
import type { ModelRegistry } from '../../src/models/registry';
import type { Attempt, AttemptPlan, GatewayState } from '../../src/pipeline/state';
import type { DeploymentHealth } from '../../src/routing/health';
import { orderDeployments } from '../../src/routing/strategies';

/** The plan routing makes when no fallback plugin wrote one: each of the model's deployments once, in strategy order. */
export function defaultPlan(state: GatewayState, model: ModelConfig, models: ModelRegistry, health?: DeploymentHealth): AttemptPlan {
  const attempts: Attempt[] = orderDeployments(model.deployments, model.routing?.strategy ?? 'weighted', health).map((deployment) => ({
    model,
    deployment,
    provider: models.provider(deployment.provider),
    request: state.request,
  }));
  return { attempts };
}
