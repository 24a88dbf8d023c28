import type { ModelConfig } from '../../src/config/types';
import type { ModelRegistry } from '../../src/models/registry';
import type { Attempt, AttemptPlan, GatewayState } from '../../src/pipeline/state';

/** Weighted random order of a model's deployments: the first is drawn by weight, the rest follow by weight too. */
export function weightedOrder<T extends { weight: number }>(items: readonly T[], random: () => number = Math.random): T[] {
  if (items.length <= 1) return [...items];
  const pool = [...items];
  const out: T[] = [];
  while (pool.length > 0) {
    const total = pool.reduce((s, d) => s + d.weight, 0);
    let r = random() * total;
    let i = 0;
    while (i < pool.length - 1 && r >= pool[i].weight) {
      r -= pool[i].weight;
      i++;
    }
    out.push(pool.splice(i, 1)[0]);
  }
  return out;
}

/** The plan routing makes when no fallback plugin wrote one: the model's deployments in weighted order, no retries. */
export function defaultPlan(state: GatewayState, model: ModelConfig, models: ModelRegistry): AttemptPlan {
  const attempts: Attempt[] = weightedOrder(model.deployments).map((deployment) => ({
    model,
    deployment,
    provider: models.provider(deployment.provider),
    request: state.request,
  }));
  return { attempts, retries: 0 };
}
