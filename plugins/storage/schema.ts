/**
 * @module
 * The storage plugin's YAML section: its type, and the JSON Schema the loader checks it with.
 */

export interface StorageConfig {
  /** Time to live of a stored response; 0 keeps them until deleted. */
  ttl_seconds: number;
  /** Models whose responses are never stored. */
  disabled_models: string[];
  /** Models whose responses are stored without content (usage and status only). */
  no_content_models: string[];
  sweep_interval_ms: number;
  sweep_batch: number;
}

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ttl_seconds: { type: 'integer', minimum: 0, default: 30 * 86400 },
    disabled_models: { type: 'array', items: { type: 'string' }, default: [] },
    no_content_models: { type: 'array', items: { type: 'string' }, default: [] },
    sweep_interval_ms: { type: 'integer', minimum: 10, default: 60000 },
    sweep_batch: { type: 'integer', minimum: 1, maximum: 10000, default: 500 },
  },
};
