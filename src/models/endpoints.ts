import type { ModelConfig } from '../config/types';

/** Whether a model serves an endpoint (`endpoints` in its config, default [chat]; chat also serves /v1/responses). */
export function servesEndpoint(model: ModelConfig, endpoint: 'chat' | 'embeddings'): boolean {
  return (model.endpoints ?? ['chat']).includes(endpoint);
}
