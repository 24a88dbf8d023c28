/**
 * @module
 * The console plugin's YAML section: its type, and the JSON Schema the loader checks it with.
 */

export interface ConsoleConfig {
  /** auto: on when the gateway listens on a loopback address only; true/false: always on / off. */
  enabled: 'auto' | boolean;
  session_ttl_hours: number;
  /** How often generation records are rolled up into the daily aggregates. */
  rollup_interval_ms: number;
  /** Records younger than this are left to the next roll-up (a record may commit a little after its created_at). */
  rollup_lag_ms: number;
}

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    enabled: { enum: ['auto', true, false], default: 'auto' },
    session_ttl_hours: { type: 'number', exclusiveMinimum: 0, maximum: 720, default: 12 },
    rollup_interval_ms: { type: 'integer', minimum: 100, default: 5000 },
    rollup_lag_ms: { type: 'integer', minimum: 0, default: 10000 },
  },
};
