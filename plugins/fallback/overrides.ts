import { errors, type DeploymentConfig, type GatewayRequestOptions, type ProviderConfig } from '../../src/plugin';
import { checkApiBase, type SsrfPolicy } from './ssrf';

export const OVERRIDE_FIELDS = ['api_base', 'api_key', 'api_version', 'deployment_id', 'model_list'] as const;

/** A deployment whose options carry the request's api_version, which must win over the deployment's own. */
function withVersion(d: DeploymentConfig, version: string | undefined): DeploymentConfig {
  return version === undefined ? d : { ...d, options: { ...d.options, api_version: version } };
}

export interface OverrideTarget {
  provider: ProviderConfig;
  deployment: DeploymentConfig;
}

function adHocProvider(
  base: ProviderConfig,
  apiBase: string | undefined,
  apiKey: string,
  apiVersion: string | undefined,
  pinned: ProviderConfig['pinned'],
): ProviderConfig {
  return {
    name: `${base.name}~override`,
    type: base.type,
    ...(apiBase !== undefined ? { api_base: apiBase } : base.api_base !== undefined ? { api_base: base.api_base } : {}),
    api_key: apiKey,
    options: apiVersion !== undefined ? { ...base.options, api_version: apiVersion } : base.options,
    max_connections: 16,
    connect_timeout_ms: base.connect_timeout_ms,
    ...(pinned ? { pinned } : {}),
  };
}

/** The ad-hoc provider at a request's own api_base, once the SSRF policy passed it; pinned to the address checked. */
async function checkedProvider(
  base: ProviderConfig,
  apiBase: string,
  apiKey: string,
  apiVersion: string | undefined,
  policy: SsrfPolicy,
): Promise<ProviderConfig> {
  const checked = await checkApiBase(apiBase, policy);
  return adHocProvider(base, apiBase, apiKey, apiVersion, { address: checked.address, family: checked.family });
}

/**
 * The deployments a request's own `api_base` / `api_key` / `api_version` / `deployment_id`
 * / `model_list` describe, checked: an overridden api_base must pass the SSRF policy and
 * comes with the request's own api_key (the operator's key never goes to it).
 * Returns null when the request overrides nothing.
 */
export async function overrideTargets(
  o: GatewayRequestOptions,
  base: { provider: ProviderConfig; deployment: DeploymentConfig },
  policy: SsrfPolicy,
): Promise<OverrideTarget[] | null> {
  const used = OVERRIDE_FIELDS.filter((f) => o[f] !== undefined);
  if (used.length === 0) return null;
  const out: OverrideTarget[] = [];
  const version = typeof o.api_version === 'string' ? o.api_version : undefined;
  const model = typeof o.deployment_id === 'string' ? o.deployment_id : base.deployment.model;
  if (Array.isArray(o.model_list)) {
    for (const [i, entry] of (o.model_list as Array<Record<string, unknown>>).entries()) {
      const params = (entry.litellm_params as Record<string, unknown> | undefined) ?? entry;
      if (typeof params.api_base !== 'string' || typeof params.api_key !== 'string') {
        throw errors.invalidRequest(
          'each model_list entry needs its own api_base and api_key',
          `model_list[${i}]`,
          'invalid_override',
        );
      }
      out.push({
        provider: await checkedProvider(base.provider, params.api_base, params.api_key, version, policy),
        deployment: {
          provider: `${base.provider.name}~override`,
          model: typeof params.model === 'string' ? params.model : model,
          weight: 1,
        },
      });
    }
    return out;
  }
  if (typeof o.api_base === 'string') {
    if (typeof o.api_key !== 'string')
      throw errors.invalidRequest(
        "A request that sets api_base must bring its own api_key: the operator's key is never sent to another address",
        'api_key',
        'api_key_required',
      );
    out.push({
      provider: await checkedProvider(base.provider, o.api_base, o.api_key, version, policy),
      deployment: withVersion({ ...base.deployment, provider: `${base.provider.name}~override`, model }, version),
    });
    return out;
  }
  const key = typeof o.api_key === 'string' ? o.api_key : (base.provider.api_key ?? '');
  out.push({
    provider: adHocProvider(base.provider, undefined, key, version, undefined),
    deployment: withVersion({ ...base.deployment, provider: `${base.provider.name}~override`, model }, version),
  });
  return out;
}
