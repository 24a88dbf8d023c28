/**
 * @module
 * The params plugin's YAML section: its type, and the JSON Schema the loader checks it with. (The chat request's own
 * schema is request-schema.ts.)
 */

export interface ParamsConfig {
  /**
   * A parameter the model does not accept: drop it (named in X-Gateway-Dropped-Params) or answer 400. Per model:
   * `unsupported_params`.
   */
  unsupported: 'drop' | 'reject';
}

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { unsupported: { enum: ['drop', 'reject'], default: 'drop' } },
};
