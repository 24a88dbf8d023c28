/**
 * @module
 * The cache plugin's YAML section: its type, and the JSON Schema the loader checks it with.
 */
import type { SemanticConfig } from './semantic';

export interface CacheConfig {
  /** Where entries live: `store` (the gateway's SQLite or PostgreSQL, table cache_entries) or `redis`. */
  backend: 'store' | 'redis';
  redis: { url: string; prefix: string; timeout_ms: number };
  /** How long an entry is served. */
  ttl_seconds: number;
  /** An answer larger than this (its JSON, bytes) is not stored. */
  max_entry_bytes: number;
  /** `account`: an entry serves only the account that stored it; `global`: every account (shared answers). */
  scope: 'account' | 'global';
  /** Models whose answers are cached, by id or glob (`*` for all); none by default. */
  models: string[];
  /** Models never cached, whatever `models` says. */
  exclude_models: string[];
  /** Models whose non-deterministic requests (temperature > 0, n > 1, tools) are cached too. */
  non_deterministic_models: string[];
  /** Keys use the cache unless their (or their account's) setting says otherwise (`in`), or only when it says so. */
  keys: 'in' | 'out';
  /** What a hit is billed: `free`, `full`, or a fraction of the usual price (0..1). */
  charge: 'free' | 'full' | number;
  /** A hit counts against the rate limits as a request would; otherwise the limits plugin releases its admission. */
  count_rate_limits: boolean;
  /** How often key and account settings are read again from the store (changes on another replica). */
  settings_refresh_ms: number;
  /** Expired entries in the store are deleted in the background this often (0: never). */
  sweep_interval_ms: number;
  /** The semantic cache: off unless `models` names some (and they are cached exactly too). */
  semantic: SemanticConfig;
}

const models = { type: 'array', items: { type: 'string', minLength: 1 }, default: [] };

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    backend: { enum: ['store', 'redis'], default: 'store' },
    redis: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        url: { type: 'string', default: 'redis://127.0.0.1:6379' },
        prefix: { type: 'string', default: 'gw:cache:' },
        timeout_ms: { type: 'integer', minimum: 1, default: 500 },
      },
    },
    ttl_seconds: { type: 'integer', minimum: 1, default: 3600 },
    max_entry_bytes: { type: 'integer', minimum: 1, default: 1_048_576 },
    scope: { enum: ['account', 'global'], default: 'account' },
    models,
    exclude_models: models,
    non_deterministic_models: models,
    keys: { enum: ['in', 'out'], default: 'in' },
    charge: {
      anyOf: [{ enum: ['free', 'full'] }, { type: 'number', minimum: 0, maximum: 1 }],
      default: 'free',
    },
    count_rate_limits: { type: 'boolean', default: false },
    settings_refresh_ms: { type: 'integer', minimum: 100, default: 5000 },
    sweep_interval_ms: { type: 'integer', minimum: 0, default: 60000 },
    semantic: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        models,
        embeddings_model: { type: 'string', default: '' },
        api_key: { type: 'string', default: '' },
        threshold: { type: 'number', minimum: 0, maximum: 1, default: 0.95 },
        max_entries: { type: 'integer', minimum: 1, default: 10000 },
      },
    },
  },
};

/** The fraction of the usual price a hit is billed. */
export function chargeFraction(charge: CacheConfig['charge']): number {
  return charge === 'free' ? 0 : charge === 'full' ? 1 : charge;
}
