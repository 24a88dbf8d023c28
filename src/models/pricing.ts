import type { DeploymentConfig, ModelConfig, PricingConfig } from '../config/types';

/**
 * What one deployment of a model charges per token: its own `pricing` when it has one (whole, not merged with the
 * model's: another provider's cache prices are not this one's), else the model's. The credit plugin charges it for
 * the attempt that served, and provider preferences sort and cap by it.
 */
export function deploymentPricing(model: ModelConfig, deployment: DeploymentConfig): PricingConfig {
  return deployment.pricing ?? model.pricing;
}

/** The per-token price OpenRouter's `sort: "price"` compares: a prompt token plus an output token. */
export function pricePerToken(p: PricingConfig): number {
  return p.prompt + p.completion;
}
