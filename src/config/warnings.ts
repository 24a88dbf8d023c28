import type { GatewayConfig, ModelConfig } from './types';

/**
 * What each provider type bills apart from a prompt token, by its price page: Anthropic (and Claude on Bedrock) bill
 * cache reads at 0.1x input and writes at 1.25x (5 minutes) or 2x (one hour); OpenAI (and Azure OpenAI) and Gemini
 * bill cached input at a discount.
 */
function cacheBilling(providerType: string, upstreamModel: string): Array<'cache_read' | 'cache_write'> {
  if (providerType === 'anthropic') return ['cache_read', 'cache_write'];
  if (providerType === 'bedrock') return /claude|anthropic/i.test(upstreamModel) ? ['cache_read', 'cache_write'] : [];
  if (providerType === 'openai' || providerType === 'azure' || providerType === 'gemini') return ['cache_read'];
  return [];
}

/** A model served by a provider that bills cache tokens apart, without those prices: they go at the prompt price. */
function cacheWarning(config: GatewayConfig, m: ModelConfig): string | null {
  const types = new Map(config.providers.map((p) => [p.name, p.type]));
  const missing = new Set<string>();
  let type = '';
  for (const d of m.deployments) {
    const t = types.get(d.provider) ?? '';
    for (const k of cacheBilling(t, d.model)) {
      if (m.pricing[k] === undefined && !missing.has(k)) {
        missing.add(k);
        type ||= t;
      }
    }
  }
  if (missing.size === 0) return null;
  return (
    `models[id=${m.id}]: provider type '${type}' bills cached prompt tokens at their own prices, but pricing has no ` +
    `${[...missing].join(' or ')}: those tokens are charged at the prompt price; set pricing.${[...missing].join(
      ' and pricing.',
    )} (cache_write_1h, for one-hour writes, defaults to 1.6 x cache_write)`
  );
}

/**
 * Things a config may say but probably does not mean; `gateway check` prints them (and
 * still exits 0). A model with no price at all would be served for free, silently:
 * say `pricing: { free: true }` when that is the intent. `workers`: the count that runs (--workers, else
 * server.workers).
 */
export function configWarnings(config: GatewayConfig, workers = config.server.workers): string[] {
  const out: string[] = [];
  for (const m of config.models) {
    const p = m.pricing;
    const priced =
      p.prompt > 0 ||
      p.completion > 0 ||
      (p.request ?? 0) > 0 ||
      (p.cache_read ?? 0) > 0 ||
      (p.cache_write ?? 0) > 0 ||
      (p.cache_write_1h ?? 0) > 0 ||
      (p.reasoning ?? 0) > 0;
    if (!priced && p.free !== true)
      out.push(
        `models[id=${m.id}]: no pricing, so it is served free of charge; ` +
          'set pricing (credits per token) or pricing.free: true',
      );
    const cache = priced && p.free !== true ? cacheWarning(config, m) : null;
    if (cache) out.push(cache);
  }
  const several = workersWarning(config, workers);
  if (several) out.push(several);
  return out;
}

/** Several workers with the limits counted in each process: every limit is then N times as loose. */
function workersWarning(config: GatewayConfig, workers: number): string | null {
  if (workers <= 1) return null;
  const limits = config.plugins.find((p) => p.name === 'limits');
  const store = (limits?.config as { store?: string } | undefined)?.store;
  if (!limits || store === 'redis') return null;
  return (
    `server.workers: ${workers} with the limits plugin counting in each process (store: memory): ` +
    'each worker holds the limits alone; set limits.store: redis to hold them across workers'
  );
}
