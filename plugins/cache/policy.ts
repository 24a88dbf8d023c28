/**
 * @module
 * Who may use the cache, decided per request from what setup compiled: the model (`models`, `exclude_models`,
 * `non_deterministic_models`, ids or globs), the key's or account's setting (`keys` the default), the client's
 * Cache-Control (`no-cache`: not read, still stored; `no-store`: neither), and whether the request is deterministic.
 */
import type { ModelRegistry } from '../../src/plugin';
import type { CacheConfig } from './schema';
import { SemanticIndex } from './semantic';

/** What the cache does for a model. */
export interface ModelRule {
  on: boolean;
  /** Its non-deterministic requests are cached too. */
  nonDeterministic: boolean;
}

const OFF: ModelRule = Object.freeze({ on: false, nonDeterministic: false });

/** `*` matches any run of characters; everything else itself. */
function matcher(globs: readonly string[]): (id: string) => boolean {
  if (globs.length === 0) return () => false;
  const escaped = globs.map((g) => g.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*'));
  const re = new RegExp(`^(?:${escaped.join('|')})$`);
  return (id) => re.test(id);
}

/** Each model's rule, compiled once (models the registry does not list are compiled on first sight). */
export class ModelRules {
  private readonly rules = new Map<string, ModelRule>();
  private readonly on: (id: string) => boolean;
  private readonly off: (id: string) => boolean;
  private readonly nonDet: (id: string) => boolean;
  /** Whether any model is cached at all (else the step is a pass-through). */
  readonly any: boolean;

  constructor(config: Readonly<CacheConfig>, models: ModelRegistry) {
    this.on = matcher(config.models);
    this.off = matcher(config.exclude_models);
    this.nonDet = matcher(config.non_deterministic_models);
    for (const m of models.all()) this.of(m.id);
    this.any = config.models.length > 0;
  }

  of(id: string): ModelRule {
    let r = this.rules.get(id);
    if (!r) {
      r = this.on(id) && !this.off(id) ? { on: true, nonDeterministic: this.nonDet(id) } : OFF;
      if (this.rules.size < 10_000) this.rules.set(id, r);
    }
    return r;
  }
}

/** The client's Cache-Control: `no-store` (neither read nor stored), `no-cache` (not read, stored), or neither. */
export function clientDirective(header: string): 'no-store' | 'no-cache' | null {
  if (header === '') return null;
  const h = header.toLowerCase();
  return h.includes('no-store') ? 'no-store' : h.includes('no-cache') ? 'no-cache' : null;
}

/** The semantic cache's part of the middleware's dependencies, when some model has it (and it can embed). */
export function semanticOf(config: Readonly<CacheConfig>) {
  const sem = config.semantic;
  if (sem.models.length === 0 || !sem.embeddings_model || !sem.api_key) return undefined;
  return { config: sem, index: new SemanticIndex(sem.max_entries), on: matcher(sem.models) };
}
