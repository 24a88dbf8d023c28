import { NANO, type FeatureCharges, type ModelConfig, type PricingConfig, type Usage } from '../../src/plugin';

/** Per-token prices in nano-credits (integers), so every cost is an exact integer. */
export interface Price {
  prompt: number;
  completion: number;
  request: number;
  /** Per prompt token read from the provider's cache; undefined: the prompt price. */
  cacheRead?: number;
  /** Per prompt token written to the provider's cache; undefined: the prompt price. */
  cacheWrite?: number;
  /** Per prompt token written with a one-hour TTL; undefined: `cacheWrite1hPrice`'s default. */
  cacheWrite1h?: number;
  /** Per reasoning token; undefined: the completion price. */
  reasoning?: number;
  /** Per audio token of the prompt / the answer (billed_features.audio); undefined: the prompt / completion price. */
  audioPrompt?: number;
  audioCompletion?: number;
  /** Per rejected prediction token (billed_features.predicted_outputs); undefined: the completion price. */
  rejectedPrediction?: number;
}

/**
 * `price` with the charges of the billed features a request uses (src/models/billed-features.ts): a per-request fee
 * added, every per-token price times the priority multiplier, audio and rejected prediction tokens at their prices.
 */
export function billedPrice(price: Price, f: FeatureCharges): Price {
  const nano = (v: number) => Math.round(v * NANO);
  const out: Price = { ...price, request: price.request + nano(f.perRequest) };
  if (f.audio) {
    out.audioCompletion = nano(f.audio.completion);
    if (f.audio.prompt !== undefined) out.audioPrompt = nano(f.audio.prompt);
  }
  if (f.prediction)
    out.rejectedPrediction = f.prediction.completion === undefined ? price.completion : nano(f.prediction.completion);
  if (f.multiplier !== 1) {
    if (out.cacheWrite1h === undefined) out.cacheWrite1h = cacheWrite1hPrice(price);
    for (const k of PER_TOKEN) {
      const v = out[k];
      if (v !== undefined) out[k] = Math.round(v * f.multiplier);
    }
  }
  return out;
}

/**
 * `price` times `fraction` (0..1): every per-token price and the per-request fee, each rounded to the nano-credit, so
 * the charge is exact (a response-cache hit's price: GatewayState.cache.charge).
 */
export function scaledPrice(price: Price, fraction: number): Price {
  if (fraction === 1) return price;
  const out: Price = { ...price, cacheWrite1h: price.cacheWrite1h ?? cacheWrite1hPrice(price) };
  out.request = Math.round(price.request * fraction);
  for (const k of PER_TOKEN) {
    const v = out[k];
    if (v !== undefined) out[k] = Math.round(v * fraction);
  }
  return out;
}

const PER_TOKEN = [
  'prompt',
  'completion',
  'cacheRead',
  'cacheWrite',
  'cacheWrite1h',
  'reasoning',
  'audioPrompt',
  'audioCompletion',
  'rejectedPrediction',
] as const;

export function modelPrice(m: ModelConfig): Price {
  return pricingPrice(m.pricing);
}

/** A `pricing` stanza (a model's or a deployment's) in nano-credits. */
export function pricingPrice(p: PricingConfig): Price {
  const nano = (v: number | undefined) => (v === undefined ? undefined : Math.round(v * NANO));
  const price: Price = {
    prompt: Math.round(p.prompt * NANO),
    completion: Math.round(p.completion * NANO),
    request: Math.round((p.request ?? 0) * NANO),
  };
  if (p.cache_read !== undefined) price.cacheRead = nano(p.cache_read);
  if (p.cache_write !== undefined) price.cacheWrite = nano(p.cache_write);
  if (p.cache_write_1h !== undefined) price.cacheWrite1h = nano(p.cache_write_1h);
  if (p.reasoning !== undefined) price.reasoning = nano(p.reasoning);
  return price;
}

/**
 * Prices by pricing stanza (config is frozen: one object per model or deployment), converted once each: a deployment
 * with its own `pricing` is charged at it, any other at its model's.
 */
export function priceBook(): (pricing: PricingConfig) => Price {
  const book = new WeakMap<PricingConfig, Price>();
  return (pricing) => {
    let price = book.get(pricing);
    if (!price) book.set(pricing, (price = pricingPrice(pricing)));
    return price;
  };
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

/** Anthropic's one-hour write is 2x input and its 5-minute write 1.25x: 1h = 1.6 x the 5-minute write. */
const HOUR_OVER_5M = 2 / 1.25;
const HOUR_OVER_PROMPT = 2;

/**
 * A one-hour cache write's price: `cache_write_1h`, else 1.6 x `cache_write` (Anthropic's 2x over 1.25x input), else
 * 2 x the prompt price (Anthropic's rule). Only Anthropic and Bedrock (Claude) report one-hour writes.
 */
export function cacheWrite1hPrice(price: Price): number {
  if (price.cacheWrite1h !== undefined) return price.cacheWrite1h;
  return price.cacheWrite !== undefined
    ? Math.round(price.cacheWrite * HOUR_OVER_5M)
    : Math.round(price.prompt * HOUR_OVER_PROMPT);
}

/**
 * The most a prompt token can cost (a cache write, or an odd operator's cache read, may cost more than a plain prompt
 * token); `hourWrites`: the attempt may write to the cache for an hour (a `ttl: "1h"` cache_control to Claude).
 */
export function maxPromptPrice(price: Price, hourWrites = false): number {
  return Math.max(price.prompt, price.cacheWrite ?? 0, price.cacheRead ?? 0, hourWrites ? cacheWrite1hPrice(price) : 0);
}

/** What each part of an answer's usage costs (nano-credits): OpenRouter's `cost_details` breakdown, and its sum. */
export interface CostParts {
  request: number;
  /** Prompt tokens not read from or written to the cache (audio ones at their price). */
  prompt: number;
  /** Cache reads and writes (one-hour writes included). */
  cache: number;
  /** Output tokens other than reasoning (audio and rejected prediction ones at their prices). */
  completion: number;
  reasoning: number;
}

/**
 * The cost of what was used, by part: prompt tokens at the prompt price except those read from the cache (cache_read)
 * and written to it (cache_write; one-hour writes, a part of them: cache_write_1h); completion tokens at the
 * completion price except reasoning tokens (reasoning). Each defaults to its base price (one-hour writes:
 * `cacheWrite1hPrice`).
 */
export function usageParts(price: Price, u: Usage): CostParts {
  const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.floor(v) : 0);
  const prompt = count(u.prompt_tokens);
  const completion = count(u.completion_tokens);
  const read = Math.min(prompt, count(u.prompt_tokens_details?.cached_tokens));
  const written = Math.min(prompt - read, count(u.prompt_tokens_details?.cache_write_tokens));
  const hour = Math.min(written, count(u.prompt_tokens_details?.cache_write_1h_tokens));
  const reasoning = Math.min(completion, count(u.completion_tokens_details?.reasoning_tokens));
  // Audio and rejected prediction tokens are priced apart only where the model prices them (billed_features).
  const audioIn =
    price.audioPrompt === undefined
      ? 0
      : Math.min(prompt - read - written, count(u.prompt_tokens_details?.audio_tokens));
  const audioOut =
    price.audioCompletion === undefined
      ? 0
      : Math.min(completion - reasoning, count(u.completion_tokens_details?.audio_tokens));
  const rejected =
    price.rejectedPrediction === undefined
      ? 0
      : Math.min(completion - reasoning - audioOut, count(u.completion_tokens_details?.rejected_prediction_tokens));
  return {
    request: price.request,
    prompt: (prompt - read - written - audioIn) * price.prompt + audioIn * (price.audioPrompt ?? 0),
    cache:
      read * (price.cacheRead ?? price.prompt) +
      (written - hour) * (price.cacheWrite ?? price.prompt) +
      (hour > 0 ? hour * cacheWrite1hPrice(price) : 0),
    completion:
      (completion - reasoning - audioOut - rejected) * price.completion +
      audioOut * (price.audioCompletion ?? 0) +
      rejected * (price.rejectedPrediction ?? 0),
    reasoning: reasoning * (price.reasoning ?? price.completion),
  };
}

/** The cost of what was used (usageParts, summed). */
export function usageCost(price: Price, u: Usage): number {
  const p = usageParts(price, u);
  return p.request + p.prompt + p.cache + p.completion + p.reasoning;
}
