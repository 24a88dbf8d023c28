import type { ProviderAdapter } from './types';
import { openaiAdapter } from './openai';
import { mockProvider } from './mock';
import { anthropicAdapter } from './anthropic';
import { geminiAdapter } from './gemini';
import { mistralAdapter } from './mistral';
import { azureAdapter } from './azure';
import { ollamaAdapter } from './ollama';
import { cohereAdapter } from './cohere';
import { bedrockAdapter } from './bedrock';

/** Provider types by name. One line per adapter folder. */
const adapters = new Map<string, ProviderAdapter>([
  [openaiAdapter.type, openaiAdapter],
  [mockProvider.type, mockProvider],
  [anthropicAdapter.type, anthropicAdapter],
  [geminiAdapter.type, geminiAdapter],
  [mistralAdapter.type, mistralAdapter],
  [azureAdapter.type, azureAdapter],
  [ollamaAdapter.type, ollamaAdapter],
  [cohereAdapter.type, cohereAdapter],
  [bedrockAdapter.type, bedrockAdapter],
]);

/**
 * Add a provider type from a plugin (services.providers.register). A type is registered
 * once: the same adapter again is a no-op (several gateways in one process), another
 * adapter under a taken name is refused.
 */
export function registerAdapter(adapter: ProviderAdapter): void {
  const existing = adapters.get(adapter.type);
  if (existing && existing !== adapter) throw new Error(`provider type '${adapter.type}' is already registered`);
  adapters.set(adapter.type, adapter);
}

export function getAdapter(type: string): ProviderAdapter {
  const a = adapters.get(type);
  if (!a) throw new Error(`unknown provider type '${type}'`); // config validation refuses unknown types first
  return a;
}

export function providerTypeNames(): string[] {
  return [...adapters.keys()];
}
