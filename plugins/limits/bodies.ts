/** JSON Schema of the limits admin API's body; its validator is generated at build time (scripts/gen-validators.js). */
const count = { type: 'integer', minimum: 0, maximum: 1_000_000_000 };
const values = {
  type: 'object',
  additionalProperties: false,
  properties: { rpm: count, tpm: count, concurrency: count },
};
const modelPattern = { type: 'string', minLength: 1, maxLength: 200, pattern: '^[^\\s]+$' };

/** The body of PUT .../limits: fields given replace, null clears (inherit / allow every model). */
export const limitSettingsSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    allowed_models: { anyOf: [{ type: 'array', maxItems: 1000, items: modelPattern }, { type: 'null' }] },
    rate_limits: {
      anyOf: [
        {
          type: 'object',
          additionalProperties: false,
          properties: {
            ...values.properties,
            models: { type: 'object', maxProperties: 1000, propertyNames: modelPattern, additionalProperties: values },
            plan: { type: 'string', minLength: 1, maxLength: 100 },
          },
        },
        { type: 'null' },
      ],
    },
    budget_alerts: {
      anyOf: [
        {
          type: 'object',
          additionalProperties: false,
          properties: {
            key_limit_percent: {
              type: 'array',
              maxItems: 20,
              items: { type: 'number', exclusiveMinimum: 0, maximum: 1000 },
            },
            account_balance_below: { type: 'array', maxItems: 20, items: { type: 'number', minimum: 0 } },
          },
        },
        { type: 'null' },
      ],
    },
  },
};
