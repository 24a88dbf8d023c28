import type { ModelConfig } from '../../src/config/types';
import type { Usage } from '../../src/types/openai';
import { NANO } from '../../src/store/money';

/** Per-token prices in nano-credits (integers), so every cost is an exact integer. */
export interface Price {
  prompt: number;
  completion: number;
  request: number;
}

export function modelPrice(m: ModelConfig): Price {
  return { prompt: Math.round(m.pricing.prompt * NANO), completion: Math.round(m.pricing.completion * NANO), request: Math.round((m.pricing.request ?? 0) * NANO) };
}

/**
 * A request's own `input_cost_per_token` / `output_cost_per_token`: applied as given only
 * for accounts allowed custom prices; for everyone else they can only raise the charge.
 */
export function effectivePrice(base: Price, options: Record<string, unknown>, customAllowed: boolean): Price {
  const custom = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.round(v * NANO) : fallback);
  const input = custom(options.input_cost_per_token, base.prompt);
  const output = custom(options.output_cost_per_token, base.completion);
  return customAllowed ? { ...base, prompt: input, completion: output } : { ...base, prompt: Math.max(input, base.prompt), completion: Math.max(output, base.completion) };
}

export function usageCost(price: Price, u: Usage): number {
  return price.request + u.prompt_tokens * price.prompt + u.completion_tokens * price.completion;
}
