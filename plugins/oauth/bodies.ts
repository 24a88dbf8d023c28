/** JSON Schema of the key exchange's body; its validator is generated at build time (scripts/gen-validators.js). */
export const keyExchangeBody = {
  type: 'object',
  required: ['code', 'code_verifier'],
  properties: {
    code: { type: 'string', minLength: 1, maxLength: 200 },
    code_verifier: { type: 'string', minLength: 1, maxLength: 200 },
    code_challenge_method: { enum: ['S256', 'plain'] },
  },
};
