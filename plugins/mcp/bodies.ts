/** JSON Schema of the mcp admin API's body; its validator is generated at build time (scripts/gen-validators.js). */
const pattern = { type: 'string', minLength: 1, maxLength: 200, pattern: '^[^\\s]+$' };

/** PUT /v1/mcp/access/{keys|accounts}/{id}: `server__tool` globs; null removes the entry (the YAML decides). */
export const accessBody = {
  type: 'object',
  additionalProperties: false,
  required: ['tools'],
  properties: { tools: { anyOf: [{ type: 'array', maxItems: 1000, items: pattern }, { type: 'null' }] } },
};
