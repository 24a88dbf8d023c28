import type { GatewayConfig } from './types';

/**
 * Things a config may say but probably does not mean; `gateway check` prints them (and
 * still exits 0). A model with no price at all would be served for free, silently:
 * say `pricing: { free: true }` when that is the intent.
 */
export function configWarnings(config: GatewayConfig): string[] {
  const out: string[] = [];
  for (const m of config.models) {
    const p = m.pricing;
    const priced =
      p.prompt > 0 ||
      p.completion > 0 ||
      (p.request ?? 0) > 0 ||
      (p.cache_read ?? 0) > 0 ||
      (p.cache_write ?? 0) > 0 ||
      (p.reasoning ?? 0) > 0;
    if (!priced && p.free !== true)
      out.push(
        `models[id=${m.id}]: no pricing, so it is served free of charge; ` +
          'set pricing (credits per token) or pricing.free: true',
      );
  }
  return out;
}
