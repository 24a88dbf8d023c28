import { getEmbeddingsMapping } from '../providers/embeddings';
import type { ModelConfig, ProviderConfig } from './types';

/** A model that serves embeddings must be deployed on providers whose type has an embeddings mapping. */
export function embeddingsProblems(
  m: ModelConfig,
  providerName: string,
  providers: readonly ProviderConfig[],
  pointer: string,
): Array<{ pointer: string; message: string }> {
  if (!m.endpoints?.includes('embeddings')) return [];
  const type = providers.find((p) => p.name === providerName)?.type;
  if (type === undefined || getEmbeddingsMapping(type)) return [];
  return [
    {
      pointer,
      message:
        `model '${m.id}' serves embeddings, ` +
        `but provider '${providerName}' (type ${type}) has no embeddings endpoint`,
    },
  ];
}

/** An embeddings model's fallbacks must serve embeddings too (a chat model cannot stand in for it). */
export function fallbackProblems(
  m: ModelConfig,
  models: readonly ModelConfig[],
  pointer: string,
): Array<{ pointer: string; message: string }> {
  if (!m.endpoints?.includes('embeddings')) return [];
  return (m.routing?.fallbacks ?? [])
    .filter((id) => {
      const f = models.find((x) => x.id === id);
      return f !== undefined && !f.endpoints?.includes('embeddings');
    })
    .map((id) => ({ pointer, message: `model '${m.id}' serves embeddings, but its fallback '${id}' does not` }));
}
