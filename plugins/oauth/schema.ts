/**
 * @module
 * The oauth plugin's YAML section: its type, and the JSON Schema the loader checks it with.
 */
import { smtpSchema } from '../../src/plugin';
import type { LeakConfig } from './leaks';

export interface OAuthConfig {
  /** Origins (https://app.example) whose callback URLs may receive codes. */
  callback_allowlist: string[];
  /** Any http://localhost:<port> or 127.0.0.1 callback (for development). */
  allow_localhost: boolean;
  /** Accept code_challenge_method plain (S256 otherwise required). */
  allow_plain: boolean;
  code_ttl_seconds: number;
  leaks: LeakConfig;
}

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    callback_allowlist: { type: 'array', items: { type: 'string', pattern: '^https?://[^/]+$' }, default: [] },
    allow_localhost: { type: 'boolean', default: false },
    allow_plain: { type: 'boolean', default: false },
    code_ttl_seconds: { type: 'integer', minimum: 10, maximum: 3600, default: 300 },
    leaks: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        public_keys: {
          type: 'array',
          default: [],
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['key_identifier', 'pem'],
            properties: { key_identifier: { type: 'string' }, pem: { type: 'string' } },
          },
        },
        hmac_secret: { type: 'string', minLength: 16 },
        replay_window_s: { type: 'integer', minimum: 1, maximum: 86400, default: 300 },
        smtp: smtpSchema,
      },
    },
  },
};
