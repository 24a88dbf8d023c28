/**
 * @module
 * Provider preferences applied to one model's deployments (already in its strategy's order): filter, sort, order,
 * and cut to the named providers when fallbacks are not allowed. What left a deployment out is noted, so that a plan
 * with none left is refused with the reason before any upstream call (noProviderMatches).
 */
import type { DeploymentConfig, ModelConfig, ProviderConfig } from '../config/types';
import { GatewayError } from '../errors';
import { deploymentPricing, pricePerToken } from '../models/pricing';
import type { Preferences } from './preferences';
import { deploymentKey } from './strategies';

/** The gateway's own measurements of a deployment (DeploymentMeasures); undefined: not measured yet. */
export interface Measured {
  latency(key: string): number | undefined;
  throughput(key: string): number | undefined;
}

export interface PreferInputs {
  provider(name: string): ProviderConfig;
  measures?: Measured;
  /** Whether a deployment is in rotation (health): one cooling down goes after those that are, whatever the sort. */
  available?: (key: string) => boolean;
}

/** Why deployments were left out, for the refusal when none is left (a field name each). */
export type Excluded = Set<string>;

function within(prefs: Preferences, m: ModelConfig, d: DeploymentConfig, out: Excluded): boolean {
  const max = prefs.maxPrice;
  if (!max) return true;
  const p = deploymentPricing(m, d);
  const over =
    (max.prompt !== undefined && p.prompt > max.prompt) ||
    (max.completion !== undefined && p.completion > max.completion) ||
    (max.request !== undefined && (p.request ?? 0) > max.request);
  if (over) out.add('max_price');
  return !over;
}

function exclude(out: Excluded, field: string): false {
  out.add(field);
  return false;
}

function admitted(prefs: Preferences, m: ModelConfig, d: DeploymentConfig, i: PreferInputs, out: Excluded): boolean {
  if (prefs.only && !prefs.only.has(d.provider)) return exclude(out, 'only');
  if (prefs.ignore?.has(d.provider)) return exclude(out, 'ignore');
  if (prefs.denyDataCollection && i.provider(d.provider).data_collection !== 'deny')
    return exclude(out, 'data_collection');
  if (!prefs.allowFallbacks && prefs.order && !prefs.order.includes(d.provider)) return exclude(out, 'allow_fallbacks');
  return within(prefs, m, d, out);
}

/** Lower sorts first; an unmeasured deployment goes after the measured ones (Infinity). */
function sortKey(prefs: Preferences, m: ModelConfig, i: PreferInputs): (d: DeploymentConfig) => number {
  const measured = (v: number | undefined, sign: number) => (v === undefined || v <= 0 ? Infinity : sign * v);
  switch (prefs.sort) {
    case 'price':
      return (d) => pricePerToken(deploymentPricing(m, d));
    case 'latency':
      return (d) => measured(i.measures?.latency(deploymentKey(d)), 1);
    case 'throughput':
      return (d) => measured(i.measures?.throughput(deploymentKey(d)), -1);
    default:
      return () => 0;
  }
}

/**
 * The deployments of `m` the preferences admit, in the order to try them: `order`'s providers first (in its order),
 * the rest by `sort` (stable: the strategy's order breaks ties), those out of rotation last. Without fallbacks, only
 * `order`'s providers, or only the first provider when there is no `order`.
 */
export function preferDeployments(
  m: ModelConfig,
  ordered: readonly DeploymentConfig[],
  prefs: Preferences,
  inputs: PreferInputs,
  excluded: Excluded,
): DeploymentConfig[] {
  const kept = ordered.filter((d) => admitted(prefs, m, d, inputs, excluded));
  const key = sortKey(prefs, m, inputs);
  const rank = (d: DeploymentConfig) => {
    const named = prefs.order ? prefs.order.indexOf(d.provider) : -1;
    return named >= 0 ? named : (prefs.order?.length ?? 0);
  };
  const down = (d: DeploymentConfig) => (inputs.available && !inputs.available(deploymentKey(d)) ? 1 : 0);
  const sorted = kept
    .map((d, at) => ({ d, at, down: down(d), rank: rank(d), key: key(d) }))
    .sort((a, b) => a.down - b.down || a.rank - b.rank || a.key - b.key || a.at - b.at)
    .map((x) => x.d);
  if (prefs.allowFallbacks || prefs.order || sorted.length === 0) return sorted;
  const first = sorted[0].provider;
  if (sorted.some((d) => d.provider !== first)) excluded.add('allow_fallbacks');
  return sorted.filter((d) => d.provider === first);
}

/** No deployment of any model in the plan is within the preferences: refused before any upstream call. */
export function noProviderMatches(model: string, prefs: Preferences, excluded: Excluded): GatewayError {
  const fields = [...excluded].map((f) => `provider.${f}`);
  const why = fields.length > 0 ? ` (left out by ${fields.join(', ')})` : '';
  const price = excluded.has('max_price') ? ` max_price was ${JSON.stringify(prefs.raw.max_price)} per million.` : '';
  return new GatewayError({
    status: 404,
    type: 'invalid_request_error',
    code: 'no_provider_matches',
    param: fields[0] ?? 'provider',
    message:
      `No deployment of '${model.slice(0, 200)}' matches the request's provider preferences${why}; ` +
      `nothing was sent upstream.${price}`,
  });
}
