/** The validated, frozen shape of gateway.yaml. */

export interface ServerConfig {
  host: string;
  port: number;
  /** Largest accepted request body, e.g. "1mb". */
  body_limit: string;
  /** How long in-flight streams may run on after SIGTERM before they are ended with an error event. */
  shutdown_grace_ms: number;
  /** Upper bound on a request's `timeout` field, in seconds. */
  max_request_timeout_s: number;
  /** Default for a request without `timeout`, in seconds (spec: 600). */
  default_request_timeout_s: number;
  admin_key?: string;
  log_level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Deepest nesting of objects/arrays accepted in a JSON body (400 json_too_deep beyond). */
  max_json_depth: number;
  /** Time a client has to send the request headers. */
  headers_timeout_ms: number;
  /** Time a client has to send the whole request (headers and body); streams answering it are not limited. */
  body_timeout_ms: number;
  /** How long an idle keep-alive connection stays open between requests. */
  keep_alive_timeout_ms: number;
  /** Concurrent connections one client address may hold (0 = no cap). */
  max_connections_per_ip: number;
  /** Gateway processes on one port (PostgreSQL store only); `gateway start --workers N` overrides. */
  workers: number;
  /** Whether X-Forwarded-For names the client (its last entry: the address the trusted proxy saw). Off by default. */
  trust_proxy: boolean;
  /** Host header names answered (DNS rebinding); default: loopback names for a loopback bind, any otherwise. */
  allowed_hosts?: string[];
}

/** Retention of what the store keeps per request (the credit ledger is kept for ever). */
export interface StoreRetention {
  /** Days generation records are kept; 0 keeps them for ever. Default 90. */
  generation_retention_days?: number;
  /** Days audit log records are kept; 0 keeps them for ever. Default 548 (eighteen months). */
  audit_retention_days?: number;
}

export type StoreConfig = StoreRetention &
  (
    | {
        driver: 'sqlite';
        path: string;
        /** ms the store's worker thread may idle before it stops (0: never); the next request starts another. */
        idle_worker_ms?: number;
      }
    | {
        driver: 'postgres';
        url: string;
        pool_size: number;
        /** Session settings (ms); defaults 5000, 2000, 10000, 2000. */
        statement_timeout_ms?: number;
        lock_timeout_ms?: number;
        idle_in_transaction_timeout_ms?: number;
        connect_timeout_ms?: number;
      }
    | { driver: 'memory' }
  );

export interface ProviderConfig {
  name: string;
  type: string;
  api_base?: string;
  api_key?: string;
  /** Extra headers sent with every upstream request. */
  headers?: Record<string, string>;
  /** Provider-type specific settings (e.g. Azure api_version, Bedrock region). */
  options?: Record<string, unknown>;
  /** Upstream connections kept per origin. */
  max_connections: number;
  connect_timeout_ms: number;
  /** Set by the gateway for a checked per-request api_base: connect to this address only (never from YAML). */
  pinned?: { address: string; family: 4 | 6 };
  /** Whether the provider may keep or train on prompts (default allow); `provider.data_collection: "deny"` skips it. */
  data_collection?: 'allow' | 'deny';
}

export interface DeploymentConfig {
  provider: string;
  /** The model name the upstream knows. */
  model: string;
  weight: number;
  priority?: number;
  cost?: number;
  /** This deployment's prices, replacing the model's whole (src/models/pricing.ts). */
  pricing?: PricingConfig;
  /** Deployment-specific options passed to the adapter (e.g. mock chunking). */
  options?: Record<string, unknown>;
}

export interface PricingConfig {
  prompt: number;
  completion: number;
  request?: number;
  cache_read?: number;
  cache_write?: number;
  /** Per token written to the cache with a one-hour TTL; default 1.6 x cache_write, else 2 x prompt. */
  cache_write_1h?: number;
  reasoning?: number;
  free?: boolean;
}

/**
 * Parameters a provider bills beyond its per-token prices, each enabled with its price (credits); a request using one
 * on a model without its entry is refused (400 parameter_not_priced). See src/models/billed-features.ts.
 */
export interface BilledFeaturesConfig {
  /** `web_search_options`: a fee per request. */
  web_search?: { per_request: number };
  /** `service_tier: "priority"`: every per-token price times `multiplier`. */
  priority_tier?: { multiplier: number };
  /** `modalities: ["audio"]` / `audio`: per audio token of the answer (and of the prompt, default the prompt price). */
  audio?: { completion: number; prompt?: number };
  /** `prediction`: per rejected prediction token (default the completion price). */
  predicted_outputs?: { completion?: number };
}

export interface CreditBoundConfig {
  image_tokens?: { low: number; high: number };
  audio_tokens?: number;
  file_tokens?: number;
  /** An item with no known maximum: refuse it for keys with a credit limit, or reserve the context length. */
  unbounded_items?: 'refuse' | 'context_length';
}

export interface ModelConfig {
  id: string;
  owned_by: string;
  created: number;
  context_length: number;
  max_output_tokens?: number;
  pricing: PricingConfig;
  deployments: DeploymentConfig[];
  supported_params?: string[];
  /** Endpoints the model serves (default [chat]; chat also serves /v1/responses). */
  endpoints?: Array<'chat' | 'embeddings'>;
  unsupported_params?: 'drop' | 'reject';
  /** Per-item token maxima the credit plugin reserves for (see plugins/credit/README.md). */
  credit_bound?: CreditBoundConfig;
  /** Provider-billed extras this model allows, with their prices (plugins/credit/README.md). */
  billed_features?: BilledFeaturesConfig;
  routing?: {
    /** A built-in strategy or one a plugin registers. */ strategy: string;
    num_retries?: number;
    fallbacks?: string[];
    context_window_fallback?: string;
  };
  [k: string]: unknown;
}

/** OpenRouter's `provider` object: which deployments may serve a request, and in what order. */
export interface ProviderPreferences {
  order?: string[];
  only?: string[];
  ignore?: string[];
  allow_fallbacks?: boolean;
  require_parameters?: boolean;
  data_collection?: 'allow' | 'deny';
  sort?: 'price' | 'throughput' | 'latency';
  /** Credits per million tokens (per request for `request`), like OpenRouter's dollars per million. */
  max_price?: { prompt?: number; completion?: number; request?: number; image?: number };
}

/** A named bundle of model(s), provider preferences, default parameters and a system prompt. */
export interface PresetConfig {
  name: string;
  model?: string;
  models?: string[];
  provider?: ProviderPreferences;
  params?: Record<string, unknown>;
  system?: string;
}

/** A plugin entry as written in YAML, normalised. */
export interface PluginEntry {
  /** Built-in name, or the path / npm package it was loaded from. */
  name: string;
  use?: string;
  config: Record<string, unknown>;
}

export interface GatewayConfig {
  server: ServerConfig;
  store: StoreConfig;
  providers: ProviderConfig[];
  models: ModelConfig[];
  /** Named request bundles (src/models/presets.ts). */
  presets: PresetConfig[];
  plugins: PluginEntry[];
  /** Where plugins' shared counters and values live (services.state): the store, or Redis across replicas. */
  shared_state: { driver: 'store' | 'redis'; url?: string; key_prefix: string };
  /** Directory of the config file: relative paths (store, plugins) resolve against it. */
  baseDir: string;
}
