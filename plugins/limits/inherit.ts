/**
 * @module
 * Keys never outgrow their parent: a key made from another (an OAuth consent's minted key) gets an allowlist within
 * the parent's and rate limits no looser than the parent's, each dimension at most the parent's effective value (its
 * own, else its account's plan, else the config; `inherit` becomes that value). Offered to other plugins as
 * `limits.inherit`; and what a key and its account may use, as `limits.allowlist` (the console's models page).
 */
import type { SharedServices } from '../../src/plugin';
import { compileAllowlist } from './model-match';
import type { LimitsConfig } from './schema';
import type { Governance } from './scopes';
import type { LimitSettings, LimitSettingsRepo, RateLimitSettings, RateLimitValues } from './store/repo';

/** Write the child's allowlist and rate limits, the parent's narrowed by what was asked for; answers what it wrote. */
export type InheritLimits = (
  parent: { hash: string; accountId: string },
  childHash: string,
  requested?: Partial<LimitSettings>,
) => Promise<LimitSettings>;

/** The models a key may use: both its own and its account's allowlists allow them. */
export type AllowedModels = (keyHash: string, accountId: string) => Promise<(modelId: string) => boolean>;

declare module '../../src/plugin' {
  interface SharedSlots {
    'limits.inherit': InheritLimits;
    'limits.allowlist': AllowedModels;
  }
}

const DIMS = ['rpm', 'tpm', 'concurrency'] as const;

/** The tighter of two limits (0 or absent: no limit). */
function tighter(a: number | undefined, b: number | undefined): number | undefined {
  if (!a) return b === undefined ? a : b;
  return b ? Math.min(a, b) : a;
}

/**
 * The requested allowlist within the parent's: none asked for is the parent's; an entry the parent's list does not
 * allow is dropped (a glob only when the parent lists it or `*`), so asking for more than the parent may use leaves
 * none of it.
 */
export function childAllowlist(parent: string[] | null, requested: string[] | null | undefined): string[] | null {
  if (requested === undefined || requested === null) return parent === null ? null : [...parent];
  if (parent === null) return [...requested];
  const allow = compileAllowlist(parent);
  return requested.filter((m) => (m.includes('*') ? parent.includes(m) || parent.includes('*') : allow(m)));
}

/** Each dimension at most the parent's effective value; per-model limits the tighter where either sets one. */
export function childRates(
  parentEffective: Required<RateLimitValues>,
  parentModels: Record<string, RateLimitValues> | undefined,
  requested: RateLimitSettings | null | undefined,
): RateLimitSettings | null {
  const out: RateLimitSettings = {};
  for (const d of DIMS) {
    const v = tighter(parentEffective[d] || undefined, requested?.[d]);
    if (v !== undefined) out[d] = v;
  }
  const globs = new Set([...Object.keys(parentModels ?? {}), ...Object.keys(requested?.models ?? {})]);
  if (globs.size > 0) {
    out.models = {};
    for (const g of globs) {
      const m: RateLimitValues = {};
      for (const d of DIMS) {
        const v = tighter(parentModels?.[g]?.[d], requested?.models?.[g]?.[d]);
        if (v !== undefined) m[d] = v;
      }
      out.models[g] = m;
    }
  }
  return Object.keys(out).length === 0 ? null : out;
}

/** Fill `limits.inherit` and `limits.allowlist`. */
export function offerInheritance(
  shared: SharedServices,
  repo: LimitSettingsRepo,
  governance: Governance,
  cfg: LimitsConfig,
): void {
  shared.set('limits.allowlist', (keyHash, accountId) => governance.allowlist(keyHash, accountId));
  shared.set('limits.inherit', async (parent, childHash, requested) => {
    const [k, a] = await Promise.all([repo.get('key', parent.hash), repo.get('account', parent.accountId)]);
    const own = k?.rateLimits ?? undefined;
    const plan = a?.rateLimits?.plan ? cfg.plans[a.rateLimits.plan] : undefined;
    const effective = { rpm: 0, tpm: 0, concurrency: 0 };
    for (const d of DIMS) effective[d] = [own, plan?.key, cfg.key].find((s) => typeof s?.[d] === 'number')?.[d] ?? 0;
    const child: LimitSettings = {
      allowedModels: childAllowlist(k?.allowedModels ?? null, requested?.allowedModels),
      rateLimits: childRates(effective, own?.models, requested?.rateLimits),
      // Its parent's own budget notice thresholds, if any: the made key is watched like the one it was made from.
      budgetAlerts: k?.budgetAlerts ?? null,
    };
    await repo.set('key', childHash, child);
    return child;
  });
}
