import { errors, type GatewayError } from '../errors';
import type { BilledFeaturesConfig, ModelConfig } from '../config/types';
import type { ChatRequest } from '../types/openai';

/**
 * Request parameters an upstream bills beyond its per-token prices (by the providers' price pages), and the
 * `billed_features` entry of a model that prices each. A request that uses one on a model without that entry is
 * refused before anything is sent or reserved: nothing reaches an upstream that the gateway cannot charge for.
 *
 * - `web_search_options` -> `web_search: {per_request}`: OpenAI bills each web search call (per 1,000 calls) on top of
 *   the tokens;
 * - `service_tier: "priority"` -> `priority_tier: {multiplier}`: OpenAI's Priority processing has its own, higher
 *   per-token prices ("flex" is cheaper and "default" / "auto" the standard: allowed);
 * - `modalities` with "audio", or `audio` -> `audio: {completion, prompt?}`: audio tokens have their own prices
 *   (usage `completion_tokens_details.audio_tokens` / `prompt_tokens_details.audio_tokens`);
 * - `prediction` -> `predicted_outputs: {completion?}`: rejected prediction tokens are billed as completion tokens
 *   (usage `completion_tokens_details.rejected_prediction_tokens`; default the completion price).
 *
 * Pure: the params plugin calls it for the requested model, and a per-attempt guard for every model of the plan.
 */
export type BilledFeature = keyof BilledFeaturesConfig;

/** The billed features a request uses, each with the parameter that asks for it. */
export function requestedFeatures(request: ChatRequest): Array<{ feature: BilledFeature; param: string }> {
  const out: Array<{ feature: BilledFeature; param: string }> = [];
  const r = request as Record<string, unknown>;
  if (r.web_search_options !== undefined && r.web_search_options !== null)
    out.push({ feature: 'web_search', param: 'web_search_options' });
  if (r.service_tier === 'priority') out.push({ feature: 'priority_tier', param: 'service_tier' });
  const modalities = r.modalities;
  if (Array.isArray(modalities) && modalities.includes('audio')) out.push({ feature: 'audio', param: 'modalities' });
  else if (r.audio !== undefined && r.audio !== null) out.push({ feature: 'audio', param: 'audio' });
  if (r.prediction !== undefined && r.prediction !== null)
    out.push({ feature: 'predicted_outputs', param: 'prediction' });
  return out;
}

const WHAT: Record<BilledFeature, string> = {
  web_search: 'web search (billed per call by the provider)',
  priority_tier: 'priority processing (billed at higher per-token prices by the provider)',
  audio: 'audio output (audio tokens are billed at their own prices by the provider)',
  predicted_outputs: 'predicted outputs (rejected prediction tokens are billed by the provider)',
};

/**
 * A 400 `parameter_not_priced` naming the first parameter of `request` that the provider bills apart and that
 * `model`'s config does not price (`billed_features`); undefined when every one is priced or none is used.
 */
export function billedFeatureProblem(request: ChatRequest, model: ModelConfig): GatewayError | undefined {
  const priced = model.billed_features ?? {};
  for (const { feature, param } of requestedFeatures(request)) {
    if (priced[feature] !== undefined) continue;
    return errors.invalidRequest(
      `${param} asks for ${WHAT[feature]}, which model '${model.id}' has no price for ` +
        `(its operator may enable it with billed_features.${feature})`,
      param,
      'parameter_not_priced',
    );
  }
  return undefined;
}

/** What a request's priced features add to its charge on `model` (credits; multipliers as given). */
export interface FeatureCharges {
  /** Added to the per-request fee. */
  perRequest: number;
  /** Every per-token price times this (priority processing). */
  multiplier: number;
  /** Per audio token, where the usage counts them apart. */
  audio?: { prompt?: number; completion: number };
  /** Per rejected prediction token (part of completion_tokens); undefined price: the completion price. */
  prediction?: { completion?: number };
}

/** The charges of the billed features `request` uses on `model` (those it has no price for add nothing). */
export function featureCharges(request: ChatRequest, model: ModelConfig): FeatureCharges {
  const priced = model.billed_features ?? {};
  const out: FeatureCharges = { perRequest: 0, multiplier: 1 };
  // Audio tokens (input audio parts too) are priced whenever the model prices them: the usage counts them apart.
  if (priced.audio) out.audio = { ...priced.audio };
  for (const { feature } of requestedFeatures(request)) {
    if (feature === 'web_search' && priced.web_search) out.perRequest += priced.web_search.per_request;
    else if (feature === 'priority_tier' && priced.priority_tier) out.multiplier = priced.priority_tier.multiplier;
    else if (feature === 'predicted_outputs' && priced.predicted_outputs)
      out.prediction = { ...priced.predicted_outputs };
  }
  return out;
}
