/**
 * JSON Schema of gateway.yaml (everything except each plugin's own section, which the
 * plugin's `configSchema` validates when the chain is loaded). Unknown keys are errors.
 * Defaults live here, so the rest of the code reads one complete, frozen object.
 */
export const providerTypes = ['openai', 'mock'] as const;

/** Prices in credits per token: a model's (`models[].pricing`) or one deployment's (`deployments[].pricing`). */
const pricingProperties = {
  prompt: { type: 'number', minimum: 0, default: 0 },
  completion: { type: 'number', minimum: 0, default: 0 },
  request: { type: 'number', minimum: 0 },
  /** Per prompt token read from the provider's cache (default: prompt). */
  cache_read: { type: 'number', minimum: 0 },
  /** Per prompt token written to the provider's cache (default: prompt). */
  cache_write: { type: 'number', minimum: 0 },
  /**
   * Per prompt token written to the cache with a one-hour TTL (Anthropic `ttl: "1h"`: 2x input where a 5-minute
   * write is 1.25x). Default: 1.6 x cache_write when set (2.0 / 1.25), else 2 x prompt.
   */
  cache_write_1h: { type: 'number', minimum: 0 },
  /** Per reasoning token, where a provider prices them apart (default: completion). */
  reasoning: { type: 'number', minimum: 0 },
  /** The model costs nothing on purpose: `gateway check` does not warn about its missing prices. */
  free: { type: 'boolean' },
} as const;

const deployment = {
  type: 'object',
  additionalProperties: false,
  required: ['provider', 'model'],
  properties: {
    provider: { type: 'string', minLength: 1 },
    model: { type: 'string', minLength: 1 },
    weight: { type: 'number', exclusiveMinimum: 0, default: 1 },
    /** For the `priority` strategy: lower goes first. */
    priority: { type: 'number' },
    /** For the `cost` strategy: relative cost, lower goes first. */
    cost: { type: 'number', minimum: 0 },
    /**
     * This deployment's own prices, replacing the model's (whole: prompt and completion are required, nothing is
     * taken from models[].pricing): the credit charged, the usage cost and provider.sort/max_price follow it.
     */
    pricing: {
      type: 'object',
      additionalProperties: false,
      required: ['prompt', 'completion'],
      properties: pricingProperties,
    },
    options: { type: 'object' },
  },
} as const;

const model = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'deployments'],
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 256 },
    owned_by: { type: 'string', default: 'gateway' },
    created: { type: 'integer', minimum: 0, default: 0 },
    context_length: { type: 'integer', minimum: 1, default: 128000 },
    max_output_tokens: { type: 'integer', minimum: 1 },
    pricing: { type: 'object', additionalProperties: false, properties: pricingProperties, default: {} },
    deployments: { type: 'array', minItems: 1, items: deployment },
    /** Which endpoints the model serves: chat (also /v1/responses), embeddings. */
    endpoints: {
      type: 'array',
      minItems: 1,
      uniqueItems: true,
      items: { enum: ['chat', 'embeddings'] },
      default: ['chat'],
    },
    /** Parameters this model accepts (default: what its providers' adapters declare). */
    supported_params: { type: 'array', items: { type: 'string' } },
    /** What to do with a parameter it does not accept: drop it (default: the params plugin's setting) or answer 400. */
    unsupported_params: { enum: ['drop', 'reject'] },
    /** How the fallback plugin routes this model. */
    routing: {
      type: 'object',
      additionalProperties: false,
      properties: {
        strategy: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$', default: 'weighted' },
        num_retries: { type: 'integer', minimum: 0, maximum: 10 },
        fallbacks: { type: 'array', items: { type: 'string', minLength: 1 } },
        context_window_fallback: { type: 'string', minLength: 1 },
      },
    },
    /**
     * Parameters the provider bills beyond per-token prices, enabled with their price (src/models/billed-features.ts);
     * a request using one the model does not list is refused (400 parameter_not_priced).
     */
    billed_features: {
      type: 'object',
      additionalProperties: false,
      properties: {
        web_search: {
          type: 'object',
          additionalProperties: false,
          required: ['per_request'],
          properties: { per_request: { type: 'number', minimum: 0 } },
        },
        priority_tier: {
          type: 'object',
          additionalProperties: false,
          required: ['multiplier'],
          properties: { multiplier: { type: 'number', minimum: 1 } },
        },
        audio: {
          type: 'object',
          additionalProperties: false,
          required: ['completion'],
          properties: { completion: { type: 'number', minimum: 0 }, prompt: { type: 'number', minimum: 0 } },
        },
        predicted_outputs: {
          type: 'object',
          additionalProperties: false,
          properties: { completion: { type: 'number', minimum: 0 } },
        },
      },
    },
    /**
     * How the credit plugin bounds items it cannot count from text (plugins/credit/README.md); defaults per provider
     * type.
     */
    credit_bound: {
      type: 'object',
      additionalProperties: false,
      properties: {
        image_tokens: {
          type: 'object',
          additionalProperties: false,
          required: ['low', 'high'],
          properties: { low: { type: 'integer', minimum: 0 }, high: { type: 'integer', minimum: 0 } },
        },
        audio_tokens: { type: 'integer', minimum: 0 },
        file_tokens: { type: 'integer', minimum: 0 },
        unbounded_items: { enum: ['refuse', 'context_length'] },
      },
    },
  },
} as const;

const provider = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'type'],
  properties: {
    name: { type: 'string', pattern: '^[A-Za-z0-9_.-]+$' },
    type: { type: 'string', minLength: 1 },
    api_base: { type: 'string', pattern: '^https?://' },
    api_key: { type: 'string' },
    headers: { type: 'object', additionalProperties: { type: 'string' } },
    options: { type: 'object' },
    max_connections: { type: 'integer', minimum: 1, default: 128 },
    connect_timeout_ms: { type: 'integer', minimum: 1, default: 10000 },
    /**
     * Whether this provider may keep or train on prompts; `provider.data_collection: "deny"` skips the `allow`
     * ones.
     */
    data_collection: { enum: ['allow', 'deny'], default: 'allow' },
  },
} as const;

const names = { type: 'array', maxItems: 64, items: { type: 'string', minLength: 1, maxLength: 128 } } as const;

/** OpenRouter's `provider` object, as a preset holds it (a request's is checked by src/deployments/preferences.ts). */
const providerPreferences = {
  type: 'object',
  additionalProperties: false,
  properties: {
    order: names,
    only: names,
    ignore: names,
    allow_fallbacks: { type: 'boolean' },
    require_parameters: { type: 'boolean' },
    data_collection: { enum: ['allow', 'deny'] },
    sort: { enum: ['price', 'throughput', 'latency'] },
    max_price: {
      type: 'object',
      additionalProperties: false,
      properties: {
        prompt: { type: 'number', minimum: 0 },
        completion: { type: 'number', minimum: 0 },
        request: { type: 'number', minimum: 0 },
        image: { type: 'number', minimum: 0 },
      },
    },
  },
} as const;

/** A named bundle a request uses as `model: "@preset/<name>"` or `preset: "<name>"` (src/models/presets.ts). */
export const presetSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: {
    name: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$' },
    model: { type: 'string', minLength: 1, maxLength: 256 },
    models: { type: 'array', minItems: 1, maxItems: 16, items: { type: 'string', minLength: 1, maxLength: 256 } },
    provider: providerPreferences,
    /** Default request parameters (temperature, max_tokens, ...): the request's own win. */
    params: { type: 'object' },
    /** A system message put first when the request has none. */
    system: { type: 'string', maxLength: 100000 },
  },
} as const;

/** store.generation_retention_days: generation records older than this are deleted (0 keeps them). */
const RETENTION = { type: 'integer', minimum: 0, default: 90 } as const;
const AUDIT_RETENTION = { type: 'integer', minimum: 0, default: 548 } as const;

const pluginEntry = {
  oneOf: [
    { type: 'string', minLength: 1 },
    {
      type: 'object',
      additionalProperties: false,
      required: ['use'],
      properties: {
        use: { type: 'string', minLength: 1 },
        name: { type: 'string', minLength: 1 },
        config: { type: 'object' },
      },
    },
    {
      type: 'object',
      minProperties: 1,
      maxProperties: 1,
      not: { required: ['use'] },
      additionalProperties: { type: ['object', 'null'] },
    },
  ],
} as const;

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['models', 'providers'],
  properties: {
    server: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        host: { type: 'string', default: '127.0.0.1' },
        port: { type: 'integer', minimum: 0, maximum: 65535, default: 8080 },
        body_limit: { type: 'string', pattern: '^[0-9]+(b|kb|mb)$', default: '20mb' },
        shutdown_grace_ms: { type: 'integer', minimum: 0, default: 10000 },
        max_request_timeout_s: { type: 'integer', minimum: 1, default: 600 },
        default_request_timeout_s: { type: 'integer', minimum: 1, default: 600 },
        admin_key: { type: 'string', minLength: 16 },
        log_level: { enum: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], default: 'info' },
        max_json_depth: { type: 'integer', minimum: 1, maximum: 1000, default: 64 },
        headers_timeout_ms: { type: 'integer', minimum: 100, default: 10000 },
        body_timeout_ms: { type: 'integer', minimum: 100, default: 30000 },
        keep_alive_timeout_ms: { type: 'integer', minimum: 100, default: 65000 },
        max_connections_per_ip: { type: 'integer', minimum: 0, default: 1024 },
        workers: { type: 'integer', minimum: 1, maximum: 64, default: 1 },
        trust_proxy: { type: 'boolean', default: false },
        allowed_hosts: {
          type: 'array',
          maxItems: 256,
          items: { type: 'string', minLength: 1, maxLength: 253, pattern: '^(\\*|(\\*\\.)?[A-Za-z0-9.:\\[\\]_-]+)$' },
        },
      },
    },
    store: {
      type: 'object',
      default: { driver: 'sqlite', path: './data/gateway.db' },
      required: ['driver'],
      properties: { driver: { enum: ['sqlite', 'postgres', 'memory'] } },
      // if/then rather than oneOf, so that defaults are applied only by the branch that matches.
      allOf: [
        {
          if: { properties: { driver: { const: 'sqlite' } } },
          then: {
            additionalProperties: false,
            properties: {
              driver: {},
              path: { type: 'string', minLength: 1, default: './data/gateway.db' },
              idle_worker_ms: { type: 'integer', minimum: 0, default: 10000 },
              generation_retention_days: RETENTION,
              audit_retention_days: AUDIT_RETENTION,
            },
          },
        },
        {
          if: { properties: { driver: { const: 'postgres' } } },
          then: {
            additionalProperties: false,
            required: ['url'],
            properties: {
              driver: {},
              url: { type: 'string', pattern: '^postgres(ql)?://' },
              pool_size: { type: 'integer', minimum: 1, default: 10 },
              statement_timeout_ms: { type: 'integer', minimum: 100, default: 5000 },
              lock_timeout_ms: { type: 'integer', minimum: 100, default: 2000 },
              idle_in_transaction_timeout_ms: { type: 'integer', minimum: 100, default: 10000 },
              connect_timeout_ms: { type: 'integer', minimum: 100, default: 2000 },
              generation_retention_days: RETENTION,
              audit_retention_days: AUDIT_RETENTION,
            },
          },
        },
        {
          if: { properties: { driver: { const: 'memory' } } },
          then: {
            additionalProperties: false,
            properties: { driver: {}, generation_retention_days: RETENTION, audit_retention_days: AUDIT_RETENTION },
          },
        },
      ],
    },
    providers: { type: 'array', items: provider },
    models: { type: 'array', items: model },
    presets: { type: 'array', items: presetSchema, default: [] },
    plugins: { type: 'array', items: pluginEntry, default: ['routing'] },
    shared_state: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        driver: { enum: ['store', 'redis'], default: 'store' },
        url: { type: 'string', pattern: '^rediss?://' },
        key_prefix: { type: 'string', default: 'gw:' },
      },
      if: { required: ['driver'], properties: { driver: { const: 'redis' } } },
      then: { required: ['url'] },
    },
  },
} as const;
