/**
 * @module
 * The limits plugin's YAML section: its type, and the JSON Schema the loader checks it with.
 */
import { smtpSchema, type SmtpSettings } from '../../src/plugin';
import { type RateLimitValues } from './store/repo';

export type { SmtpSettings };

export interface LimitsConfig {
  /** `memory`: counters in this process (one replica); `redis`: shared by every replica. */
  store: 'memory' | 'redis';
  redis: { url: string; prefix: string; timeout_ms: number };
  /**
   * Redis unreachable: `open` counts in this replica alone (limit x replicas overall), `closed` refuses with 429; the
   * gateway stays up.
   */
  fail_mode: 'open' | 'closed';
  /** The trailing window of rpm and tpm. */
  window_ms: number;
  /** How long a key's or account's allowlist and limits are cached (ms). */
  settings_cache_ms: number;
  /** Defaults for every key and every account (0 = no limit). */
  key: Required<RateLimitValues>;
  account: Required<RateLimitValues>;
  /** Per model across all keys, by model id or glob (first match). */
  models: Record<string, RateLimitValues>;
  /** Per key x model defaults, by model id or glob. */
  key_models: Record<string, RateLimitValues>;
  /** Named plans an account may be put on: their key and account defaults. */
  plans: Record<string, { key?: RateLimitValues; account?: RateLimitValues }>;
  /** Failed authentications per client address in the window before 429. 0 = off. */
  auth_failures: { max: number; window_ms: number };
  alerts: {
    /** Percent of a key's credit limit (in its window) that sends a notice. */
    key_limit_percent: number[];
    /** Account balances (credits) below which a notice goes. */
    account_balance_below: number[];
    /** Where e-mail goes out; defaults to the oauth plugin's leak-notice SMTP settings. */
    smtp?: SmtpSettings;
    webhook?: { url: string; secret: string; max_attempts: number; backoff_ms: number; timeout_ms: number };
  };
}

const values = (defaults: boolean) => ({
  type: 'object',
  additionalProperties: false,
  ...(defaults ? { default: {} } : {}),
  properties: {
    rpm: { type: 'integer', minimum: 0, ...(defaults ? { default: 0 } : {}) },
    tpm: { type: 'integer', minimum: 0, ...(defaults ? { default: 0 } : {}) },
    concurrency: { type: 'integer', minimum: 0, ...(defaults ? { default: 0 } : {}) },
  },
});

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    store: { enum: ['memory', 'redis'], default: 'memory' },
    redis: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        url: { type: 'string', default: 'redis://127.0.0.1:6379' },
        prefix: { type: 'string', default: 'gw:limits:' },
        timeout_ms: { type: 'integer', minimum: 10, default: 5000 },
      },
    },
    fail_mode: { enum: ['open', 'closed'], default: 'open' },
    window_ms: { type: 'integer', minimum: 1000, default: 60000 },
    settings_cache_ms: { type: 'integer', minimum: 0, maximum: 60000, default: 2000 },
    key: values(true),
    account: values(true),
    models: { type: 'object', default: {}, additionalProperties: values(false) },
    key_models: { type: 'object', default: {}, additionalProperties: values(false) },
    plans: {
      type: 'object',
      default: {},
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        properties: { key: values(false), account: values(false) },
      },
    },
    auth_failures: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        max: { type: 'integer', minimum: 0, default: 20 },
        window_ms: { type: 'integer', minimum: 1000, default: 60000 },
      },
    },
    alerts: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        key_limit_percent: {
          type: 'array',
          items: { type: 'number', exclusiveMinimum: 0, maximum: 1000 },
          default: [],
        },
        account_balance_below: { type: 'array', items: { type: 'number', minimum: 0 }, default: [] },
        smtp: smtpSchema,
        webhook: {
          type: 'object',
          additionalProperties: false,
          required: ['url', 'secret'],
          properties: {
            url: { type: 'string', pattern: '^https?://' },
            secret: { type: 'string', minLength: 16 },
            max_attempts: { type: 'integer', minimum: 1, maximum: 20, default: 5 },
            backoff_ms: { type: 'integer', minimum: 1, default: 500 },
            timeout_ms: { type: 'integer', minimum: 100, default: 5000 },
          },
        },
      },
    },
  },
};
