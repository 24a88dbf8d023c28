/**
 * @module
 * The fallback plugin's YAML section: its type, and the JSON Schema the loader checks it with.
 */
import type { HealthOptions } from '../../src/plugin';

export interface FallbackConfig {
  /** Retries per model when neither the request (`num_retries`) nor the model says. */
  num_retries: number;
  /** The most retries a request may ask for (`num_retries`): beyond it, a 400. */
  max_retries: number;
  /** The most fallback models a request may name (`fallbacks`, `models`): beyond it, a 400. */
  max_fallbacks: number;
  /** The most upstream calls one request makes, retries and fallbacks included: the plan stops there. */
  max_attempts: number;
  backoff_base_ms: number;
  backoff_max_ms: number;
  /** An upstream's Retry-After is honoured up to this. */
  retry_after_max_ms: number;
  cooldown: HealthOptions;
  overrides: {
    /** Allow per-request api_base / api_key / api_version / deployment_id / model_list at all. */
    allow: boolean;
    /** Hosts or URL prefixes an overridden api_base may use. */
    api_base_allowlist: string[];
    /** Private CIDRs an overridden api_base may resolve to (e.g. an on-premises server). */
    allow_private: string[];
  };
}

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    num_retries: { type: 'integer', minimum: 0, maximum: 10, default: 2 },
    max_retries: { type: 'integer', minimum: 0, maximum: 10, default: 5 },
    max_fallbacks: { type: 'integer', minimum: 0, maximum: 50, default: 5 },
    max_attempts: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
    backoff_base_ms: { type: 'integer', minimum: 0, default: 200 },
    backoff_max_ms: { type: 'integer', minimum: 0, default: 5000 },
    retry_after_max_ms: { type: 'integer', minimum: 0, default: 30000 },
    cooldown: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        failures: { type: 'integer', minimum: 1, default: 3 },
        window_ms: { type: 'integer', minimum: 1, default: 60000 },
        cooldown_ms: { type: 'integer', minimum: 1, default: 30000 },
      },
    },
    overrides: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        allow: { type: 'boolean', default: false },
        api_base_allowlist: { type: 'array', items: { type: 'string', minLength: 1 }, default: [] },
        allow_private: {
          type: 'array',
          items: { type: 'string', pattern: '^[0-9a-fA-F:.]+(/[0-9]{1,3})?$' },
          default: [],
        },
      },
    },
  },
};
