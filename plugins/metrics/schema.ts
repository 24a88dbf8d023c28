/**
 * @module
 * The metrics plugin's YAML section: its type, and the JSON Schema the loader checks it with.
 */

export interface MetricsConfig {
  /** Require `Authorization: Bearer <token>` on /metrics. */
  token?: string;
  /** Serve /metrics on this separate port (on server.host) instead of the gateway's. */
  port?: number;
  /** Add a `key` label: the first 12 hex characters of the key's SHA-256. Off by default. */
  key_label: boolean;
  /** How often (ms) the event-loop delay monitor's timer wants to run. */
  loop_delay_resolution_ms: number;
}

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    token: { type: 'string', minLength: 8 },
    port: { type: 'integer', minimum: 1, maximum: 65535 },
    key_label: { type: 'boolean', default: false },
    loop_delay_resolution_ms: { type: 'integer', minimum: 1, maximum: 1000, default: 10 },
  },
};
