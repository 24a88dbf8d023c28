/**
 * @module
 * The auth plugin's YAML section: its type, and the JSON Schema the loader checks it with.
 */

export interface AuthConfig {
  /** Require a key on GET /v1/models too (public by default). */
  protect_models: boolean;
  /**
   * How long a key lookup is cached (ms): a disabled or deleted key stops working on every replica within this bound.
   */
  cache_ttl_ms: number;
  cache_max_entries: number;
  /** For a first local start: when the store has no account yet, create this one with a key and print the key once. */
  bootstrap?: { account: string; credits: number };
}

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    protect_models: { type: 'boolean', default: false },
    cache_ttl_ms: { type: 'integer', minimum: 0, maximum: 5000, default: 2000 },
    cache_max_entries: { type: 'integer', minimum: 1, default: 100000 },
    bootstrap: {
      type: 'object',
      additionalProperties: false,
      required: ['account', 'credits'],
      properties: { account: { type: 'string', minLength: 1 }, credits: { type: 'number', minimum: 0 } },
    },
  },
};
