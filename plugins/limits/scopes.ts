import { LimitSettingsRepo, type LimitSettings, type RateLimitSettings, type RateLimitValues } from './store/repo';
import type { ScopeLimits } from './counter-store';
import type { LimitsConfig } from './schema';
import { bothAllow, compileAllowlist, matchFirst, type ModelPredicate } from './model-match';

type Table = ReadonlyArray<{ match: ModelPredicate; value: RateLimitValues }>;

function table(map: Record<string, RateLimitValues> | undefined): Table {
  return Object.entries(map ?? {}).map(([glob, value]) => ({ match: compileAllowlist([glob]), value }));
}

interface Cached {
  until: number;
  settings: LimitSettings;
  allow: ModelPredicate;
  models: Table;
}

const NONE: LimitSettings = { allowedModels: null, rateLimits: null, budgetAlerts: null };

/** The first value set, from the most specific source to the least; 0 (no limit) when none is. */
function pick(dim: keyof RateLimitValues, ...sources: Array<RateLimitValues | undefined>): number {
  for (const s of sources) if (s && typeof s[dim] === 'number') return s[dim];
  return 0;
}

function scope(id: string, ...sources: Array<RateLimitValues | undefined>): ScopeLimits {
  return {
    id,
    rpm: pick('rpm', ...sources),
    tpm: pick('tpm', ...sources),
    concurrency: pick('concurrency', ...sources),
  };
}

const limited = (s: ScopeLimits) => s.rpm > 0 || s.tpm > 0 || s.concurrency > 0;

/** A model's or a key x model's scope (`m:`, `km:`), counted per upstream attempt rather than per request. */
export const isModelScope = (s: ScopeLimits): boolean => s.id.startsWith('m:') || s.id.startsWith('km:');

export interface RequestGovernance {
  /** Both the key's and the account's allowlists allow the model. */
  allow: ModelPredicate;
  scopes: ScopeLimits[];
  /** The model and key x model scopes alone: what each upstream attempt on the model counts against. */
  modelScopes: ScopeLimits[];
  /** The key or its account has budget notice thresholds of its own (checked after the request even when the
   * configured ones are empty). */
  ownAlerts: boolean;
}

/**
 * Resolves what governs a request: the key's and its account's allowlists (cached for
 * `settings_cache_ms`), and the scopes that limit it: key, account, model, key x model,
 * each limit taken from the key/account's own settings, then its account's plan, then config.
 */
export class Governance {
  private readonly cache = new Map<string, Cached>();
  private readonly models: Table;
  private readonly keyModels: Table;

  constructor(
    private readonly repo: LimitSettingsRepo,
    private readonly cfg: LimitsConfig,
  ) {
    this.models = table(cfg.models);
    this.keyModels = table(cfg.key_models);
    LimitSettingsRepo.listeners.add(this.forget);
  }

  close(): void {
    LimitSettingsRepo.listeners.delete(this.forget);
  }

  private async settings(kind: 'key' | 'account', id: string): Promise<Cached> {
    const cacheKey = `${kind}:${id}`;
    const now = Date.now();
    const hit = this.cache.get(cacheKey);
    if (hit && hit.until > now) return hit;
    const settings = (await this.repo.get(kind, id)) ?? NONE;
    const entry: Cached = {
      until: now + this.cfg.settings_cache_ms,
      settings,
      allow: compileAllowlist(settings.allowedModels),
      models: table(settings.rateLimits?.models),
    };
    if (this.cache.size > 100_000) this.cache.clear();
    this.cache.set(cacheKey, entry);
    return entry;
  }

  /** Forget a key's or account's settings on this replica (after the admin API changed them). */
  readonly forget = (kind: 'key' | 'account', id: string): void => {
    this.cache.delete(`${kind}:${id}`);
    this.governed.clear(); // an account's change reaches every key of it
  };

  async allowlist(keyHash: string, accountId: string): Promise<ModelPredicate> {
    const [k, a] = await Promise.all([this.settings('key', keyHash), this.settings('account', accountId)]);
    return bothAllow(k.allow, a.allow);
  }

  /**
   * What governs a key's requests for a model, kept as long as the settings it was made of (a request's work would
   * otherwise build the same four scopes, their ids and the allowlist anew). Readonly to its users.
   */
  private readonly governed = new Map<
    string,
    Map<string, { accountId: string; until: number; g: RequestGovernance }>
  >();

  /** What governs the request while it is cached, without a promise; else undefined (then: forRequest). */
  cachedFor(keyHash: string, accountId: string, modelId: string): RequestGovernance | undefined {
    const hit = this.governed.get(keyHash)?.get(modelId);
    return hit && hit.accountId === accountId && hit.until > Date.now() ? hit.g : undefined;
  }

  async forRequest(keyHash: string, accountId: string, modelId: string): Promise<RequestGovernance> {
    const hit = this.cachedFor(keyHash, accountId, modelId);
    if (hit) return hit;
    const [k, a] = await Promise.all([this.settings('key', keyHash), this.settings('account', accountId)]);
    const g = this.govern(k, a, keyHash, accountId, modelId);
    let byModel = this.governed.get(keyHash);
    if (!byModel) {
      if (this.governed.size > 100_000) this.governed.clear();
      this.governed.set(keyHash, (byModel = new Map()));
    }
    byModel.set(modelId, { accountId, until: Math.min(k.until, a.until), g });
    return g;
  }

  private govern(k: Cached, a: Cached, keyHash: string, accountId: string, modelId: string): RequestGovernance {
    const kr: RateLimitSettings | undefined = k.settings.rateLimits ?? undefined;
    const ar: RateLimitSettings | undefined = a.settings.rateLimits ?? undefined;
    const plan = ar?.plan ? this.cfg.plans[ar.plan] : undefined;
    const candidates = [
      scope(`k:${keyHash}`, kr, plan?.key, this.cfg.key),
      scope(`a:${accountId}`, ar, plan?.account, this.cfg.account),
      scope(`m:${modelId}`, matchFirst(this.models, modelId)),
      scope(`km:${keyHash}:${modelId}`, matchFirst(k.models, modelId), matchFirst(this.keyModels, modelId)),
    ];
    const scopes = candidates.filter(limited);
    return {
      allow: bothAllow(k.allow, a.allow),
      scopes,
      modelScopes: scopes.filter(isModelScope),
      ownAlerts: k.settings.budgetAlerts !== null || a.settings.budgetAlerts !== null,
    };
  }
}
