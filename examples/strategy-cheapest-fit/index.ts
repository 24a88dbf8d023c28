/**
 * A routing strategy plugin: `strategy: cheapest-fit` tries the model's deployments from the
 * cheapest (`cost`) to the dearest, leaving out any whose context window
 * (`options.context_length`, else the model's) cannot hold the prompt plus the answer asked for.
 * Written only against the public API: `model-gateway/plugin`.
 */
import { definePlugin, type DeploymentConfig, type RoutingStrategy } from 'model-gateway/plugin';

const contextOf = (d: DeploymentConfig, fallback: number): number => {
  const v = d.options?.context_length;
  return typeof v === 'number' && v > 0 ? v : fallback;
};

export const cheapestFit: RoutingStrategy = (deployments, { model, request, promptTokens }) => {
  const answer = request.max_completion_tokens ?? request.max_tokens ?? 0;
  return deployments
    .filter((d) => contextOf(d, model.context_length) >= promptTokens + answer)
    .sort((a, b) => (a.cost ?? 0) - (b.cost ?? 0));
};

export default definePlugin({
  name: 'strategy-cheapest-fit',
  description: 'Adds the `cheapest-fit` routing strategy.',
  strategies: ['cheapest-fit'],
  configSchema: { type: 'object', additionalProperties: false },
  setup(_config, services) {
    services.strategies.register('cheapest-fit', cheapestFit);
    return {};
  },
});
