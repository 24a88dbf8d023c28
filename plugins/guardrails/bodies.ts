/**
 * JSON Schema of the guardrails admin API's body; its validator is generated at build time
 * (scripts/gen-validators.js).
 */

/** The body of PUT .../guardrails: a policy named in the YAML, or null to clear. */
export const policyBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['policy'],
  properties: {
    policy: { anyOf: [{ type: 'string', minLength: 1, maxLength: 64 }, { type: 'null' }] },
  },
};
