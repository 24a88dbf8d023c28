/** JSON Schema of the console's sign-in body; its validator is generated at build time (scripts/gen-validators.js). */
export const signInBody = {
  type: 'object',
  additionalProperties: false,
  required: ['key'],
  properties: { key: { type: 'string', minLength: 1, maxLength: 200 } },
};
