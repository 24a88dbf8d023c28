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
 * The built-in adapters' `supportedParams`, from their parameter tables alone (each adapter
 * declares its table's names): the params plugin needs every type's names at startup, and
 * this way does not load every adapter for them. test/providers checks they agree.
 */
const paramLoaders: Record<string, () => readonly string[]> = {
  openai: () => (require('./openai/params') as typeof import('./openai/params')).OPENAI_PARAMS,
  mock: () => (require('./mock/params') as typeof import('./mock/params')).MOCK_PARAMS,
  anthropic: () => (require('./anthropic/params') as typeof import('./anthropic/params')).ANTHROPIC_PARAMS,
  gemini: () => (require('./gemini/params') as typeof import('./gemini/params')).GEMINI_PARAMS,
  mistral: () => (require('./mistral/params') as typeof import('./mistral/params')).MISTRAL_PARAMS,
  azure: () => (require('./azure/params') as typeof import('./azure/params')).AZURE_PARAMS,
  ollama: () => (require('./ollama/params') as typeof import('./ollama/params')).OLLAMA_PARAMS,
  cohere: () => (require('./cohere/params') as typeof import('./cohere/params')).COHERE_PARAMS,
  bedrock: () => (require('./bedrock/params') as typeof import('./bedrock/params')).BEDROCK_PARAMS,
};

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

/** A built-in type's parameter names, read from its table (undefined for other types). */
export function builtInParams(type: string): readonly string[] | undefined {
  return Object.hasOwn(paramLoaders, type) ? paramLoaders[type]() : undefined;
}

/** A type's `supportedParams` without loading a built-in adapter that is not loaded yet. */
export function supportedParamsOf(type: string): readonly string[] {
  return loaded.get(type)?.supportedParams ?? builtInParams(type) ?? getAdapter(type).supportedParams;
}

/** Built-in types and the ones plugins registered. */
export function providerTypeNames(): string[] {
  return [...new Set([...Object.keys(loaders), ...loaded.keys()])];
}
