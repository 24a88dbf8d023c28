/** JSON Schemas of the cache plugin's admin bodies; their validators are generated (scripts/gen-validators.js). */
const id = { type: 'string', minLength: 1, maxLength: 200 };

/** POST /v1/cache/purge: entries matching every field given; `all: true` alone purges every entry. */
export const purgeBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    entry: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    key_hash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    account_id: id,
    model: id,
    older_than_seconds: { type: 'integer', minimum: 0 },
    all: { const: true },
  },
};

/** PUT /v1/keys/{hash}/cache and /v1/accounts/{id}/cache: opt in (true), out (false), or the default (null). */
export const settingBody = {
  type: 'object',
  additionalProperties: false,
  required: ['enabled'],
  properties: { enabled: { type: ['boolean', 'null'] } },
};
