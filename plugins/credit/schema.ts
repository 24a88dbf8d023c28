/**
 * @module
 * The credit plugin's YAML section: its type, and the JSON Schema the loader checks it with.
 */

export interface CreditConfig {
  /**
   * Release reservations this old at start-up and every minute (a crashed replica's); 0 = the request timeout cap plus
   * a minute.
   */
  stale_reservation_ms: number;
}

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { stale_reservation_ms: { type: 'integer', minimum: 0, default: 0 } },
};
