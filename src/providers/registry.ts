import type { ProviderAdapter } from './types';

/**
 * Provider types by name, each loaded on first use: a configuration that uses only
 * OpenAI-compatible upstreams never loads (or keeps in memory) the other adapters.
 * One line per adapter folder.
 */
const loaders: Record<string, () => ProviderAdapter> = {
  openai: () => (require('./openai') as typeof import('./openai')).openaiAdapter,
  mock: () => (require('./mock') as typeof import('./mock')).mockProvider,
  anthropic: () => (require('./anthropic') as typeof import('./anthropic')).anthropicAdapter,
  gemini: () => (require('./gemini') as typeof import('./gemini')).geminiAdapter,
  mistral: () => (require('./mistral') as typeof import('./mistral')).mistralAdapter,
  azure: () => (require('./azure') as typeof import('./azure')).azureAdapter,
  ollama: () => (require('./ollama') as typeof import('./ollama')).ollamaAdapter,
  cohere: () => (require('./cohere') as typeof import('./cohere')).cohereAdapter,
  bedrock: () => (require('./bedrock') as typeof import('./bedrock')).bedrockAdapter,
};
const loaded = new Map<string, ProviderAdapter>();

/**
 * Add a provider type from a plugin (services.providers.register). A type is registered
 * once: the same adapter again is a no-op (several gateways in one process), another
 * adapter under a taken name is refused.
 */
export function registerAdapter(adapter: ProviderAdapter): void {
  const existing = loaded.get(adapter.type);
  if (Object.hasOwn(loaders, adapter.type) || (existing && existing !== adapter)) {
    throw new Error(`provider type '${adapter.type}' is already registered`);
  }
  loaded.set(adapter.type, adapter);
}

export function getAdapter(type: string): ProviderAdapter {
  let a = loaded.get(type);
  if (a) return a;
  const load = Object.hasOwn(loaders, type) ? loaders[type] : undefined;
  if (!load) throw new Error(`unknown provider type '${type}'`); // config validation refuses unknown types first
  a = load();
  if (a.type !== type) throw new Error(`adapter '${type}' declares type '${a.type}'`);
  loaded.set(type, a);
  return a;
}

/** Built-in types and the ones plugins registered. */
export function providerTypeNames(): string[] {
  return [...new Set([...Object.keys(loaders), ...loaded.keys()])];
}
