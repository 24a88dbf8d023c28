import type { ModelConfig } from '../../src/config/types';
import type { Usage } from '../../src/types/openai';
import { NANO } from '../../src/store/money';

/** Per-token prices in nano-credits (integers), so every cost is an exact integer. */
export interface Price {
  prompt: number;
  completion: number;
  request: number;
  /** Per prompt token read from the provider's cache; undefined: the prompt price. */
  cacheRead?: number;
  /** Per prompt token written to the provider's cache; undefined: the prompt price. */
  cacheWrite?: number;
  /** Per reasoning token; undefined: the completion price. */
  reasoning?: number;
}

export function modelPrice(m: ModelConfig): Price {
  const p = m.pricing;
  const nano = (v: number | undefined) => (v === undefined ? undefined : Math.round(v * NANO));
  const price: Price = {
    prompt: Math.round(p.prompt * NANO),
    completion: Math.round(p.completion * NANO),
    request: Math.round((p.request ?? 0) * NANO),
  };
  if (p.cache_read !== undefined) price.cacheRead = nano(p.cache_read);
  if (p.cache_write !== undefined) price.cacheWrite = nano(p.cache_write);
  if (p.reasoning !== undefined) price.reasoning = nano(p.reasoning);
  return price;
}

/**
 * A request's own `input_cost_per_token` / `output_cost_per_token`: applied as given only
 * for accounts allowed custom prices; for everyone else they can only raise the charge.
 */
export function effectivePrice(base: Price, options: Record<string, unknown>, customAllowed: boolean): Price {
  const custom = (v: unknown, fallback: number) =>
    typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.round(v * NANO) : fallback;
  const input = custom(options.input_cost_per_token, base.prompt);
  const output = custom(options.output_cost_per_token, base.completion);
  return customAllowed
    ? { ...base, prompt: input, completion: output }
    : { ...base, prompt: Math.max(input, base.prompt), completion: Math.max(output, base.completion) };
}

/**
 * The most a prompt token can cost (a cache write, or an odd operator's cache read, may cost more than a plain prompt
 * token).
 */
export function maxPromptPrice(price: Price): number {
  return Math.max(price.prompt, price.cacheWrite ?? 0, price.cacheRead ?? 0);
}

/**
 * The cost of what was used: prompt tokens at the prompt price except those read from
 * the cache (cache_read) and written to it (cache_write); completion tokens at the
 * completion price except reasoning tokens (reasoning). Each defaults to its base price.
 */
export function usageCost(price: Price, u: Usage): number {
  const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);
  const prompt = count(u.prompt_tokens);
  const completion = count(u.completion_tokens);
  const read = Math.min(prompt, count(u.prompt_tokens_details?.cached_tokens));
  const written = Math.min(prompt - read, count(u.prompt_tokens_details?.cache_write_tokens));
  const reasoning = Math.min(completion, count(u.completion_tokens_details?.reasoning_tokens));
  return (
    price.request +
    (prompt - read - written) * price.prompt +
    read * (price.cacheRead ?? price.prompt) +
    written * (price.cacheWrite ?? price.prompt) +
    (completion - reasoning) * price.completion +
    reasoning * (price.reasoning ?? price.completion)
  );
}
