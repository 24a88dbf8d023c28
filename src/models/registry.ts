import type { GatewayConfig, ModelConfig, ProviderConfig } from '../config/types';
import type { ModelObject } from '../types/openai';

/** Configured models by id, with the public list built once at start-up. */
export class ModelRegistry {
  private readonly byId = new Map<string, ModelConfig>();
  private readonly providers = new Map<string, ProviderConfig>();
  readonly list: { object: 'list'; data: ModelObject[] };

  constructor(config: GatewayConfig) {
    for (const p of config.providers) this.providers.set(p.name, p);
    for (const m of config.models) this.byId.set(m.id, m);
    this.list = Object.freeze({ object: 'list' as const, data: config.models.map(toModelObject) });
  }

  get(id: string): ModelConfig | undefined {
    return this.byId.get(id);
  }

  has(id: string): boolean {
    return this.byId.has(id);
  }

  hasProvider(name: string): boolean {
    return this.providers.has(name);
  }

  provider(name: string): ProviderConfig {
    const p = this.providers.get(name);
    if (!p) throw new Error(`no provider named '${name}'`); // config validation makes this unreachable
    return p;
  }

  all(): ModelConfig[] {
    return [...this.byId.values()];
  }
}

export function toModelObject(m: ModelConfig): ModelObject {
  return { id: m.id, object: 'model', created: m.created, owned_by: m.owned_by };
}
