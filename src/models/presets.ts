import type { PresetConfig } from '../config/types';

/** A preset as the admin API lists it: where it comes from (gateway.yaml, read-only, or the store). */
export interface ListedPreset {
  preset: PresetConfig;
  source: 'config' | 'store';
}

/**
 * The presets a request may name (src/models/resolve.ts): gateway.yaml's, fixed, and those the admin API keeps in the
 * store (the routing plugin loads them at start, on every change it makes and every few seconds for the others').
 * A name in gateway.yaml cannot be taken by a stored one.
 */
export class PresetBook {
  private readonly fixed: ReadonlyMap<string, PresetConfig>;
  private stored = new Map<string, PresetConfig>();

  constructor(presets: readonly PresetConfig[]) {
    this.fixed = new Map(presets.map((p) => [p.name, p]));
  }

  get(name: string): PresetConfig | undefined {
    return this.fixed.get(name) ?? this.stored.get(name);
  }

  isFixed(name: string): boolean {
    return this.fixed.has(name);
  }

  /** The stored presets, as the store has them now. */
  replaceStored(presets: readonly PresetConfig[]): void {
    this.stored = new Map(presets.filter((p) => !this.fixed.has(p.name)).map((p) => [p.name, p]));
  }

  list(): ListedPreset[] {
    return [
      ...[...this.fixed.values()].map((preset) => ({ preset, source: 'config' as const })),
      ...[...this.stored.values()].map((preset) => ({ preset, source: 'store' as const })),
    ].sort((a, b) => a.preset.name.localeCompare(b.preset.name));
  }
}

export const PRESETS = 'models.presets';
