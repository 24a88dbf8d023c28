/**
 * JSON Schemas of the admin API's account and key bodies (the auth plugin's admin API, the console, the CLI: the wire
 * format in admin-wire.ts). Their validators are generated at build time (scripts/gen-validators.js,
 * src/validation/generated/bodies.ts): nothing is compiled when the gateway starts.
 */
export const creditsSchema = { type: 'number', minimum: 0, maximum: 9_000_000 } as const;

export const accountBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    email: { type: 'string', pattern: '^[^@\\s]+@[^@\\s]+$', maxLength: 320 },
    credits: creditsSchema,
    custom_pricing: { type: 'boolean' },
  },
};

export const amountBody = {
  type: 'object',
  additionalProperties: false,
  required: ['amount'],
  properties: { amount: { type: 'number', minimum: -9_000_000, maximum: 9_000_000 } },
};

const reset = { enum: ['daily', 'weekly', 'monthly', null] };
/**
 * A key's role on the admin API (src/auth/roles.ts); `account` or null: an ordinary key. `admin` is read to be refused
 * with the right error (a 403 naming the role for an operator; no key is `admin`: the admin key alone is).
 */
const keyRole = { enum: ['admin', 'operator', 'viewer', 'account', null] };

export const newKeyBody = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'account_id'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    account_id: { type: 'string', minLength: 1 },
    limit: { anyOf: [creditsSchema, { type: 'null' }] },
    limit_reset: reset,
    expires_at: { type: ['string', 'null'] },
    role: keyRole,
  },
};

export const keyPatchBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 200 },
    disabled: { type: 'boolean' },
    limit: { anyOf: [creditsSchema, { type: 'null' }] },
    limit_reset: reset,
    role: keyRole,
  },
};
