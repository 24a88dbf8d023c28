/**
 * @module
 * The mcp plugin's YAML section: its type, and the JSON Schema the loader checks it with.
 */

/** An upstream MCP server over Streamable HTTP: its URL and the headers the gateway sends it (never the client). */
export interface HttpServerConfig {
  name: string;
  url: string;
  /** Sent with every request to the server (`${ENV}` is interpolated at load); never shown to clients. */
  headers?: Record<string, string>;
  /** Credits charged per tool call on this server (0: free); `tool_prices` overrides it per tool (glob). */
  price_per_call: number;
  tool_prices: Record<string, number>;
  timeout_ms?: number;
}

/** An upstream MCP server the gateway starts itself and talks to over stdio. */
export interface StdioServerConfig {
  name: string;
  command: string;
  args?: string[];
  /** Added to the few variables the process inherits (PATH, HOME, ...: the SDK's default environment). */
  env?: Record<string, string>;
  cwd?: string;
  price_per_call: number;
  tool_prices: Record<string, number>;
  timeout_ms?: number;
}

export type ServerConfig = HttpServerConfig | StdioServerConfig;

export const isStdio = (s: ServerConfig): s is StdioServerConfig => 'command' in s;

export interface McpConfig {
  servers: ServerConfig[];
  /** Where the MCP endpoint is served. */
  path: string;
  /** A tool call's longest wait for its upstream (ms); a server's `timeout_ms` overrides it. */
  timeout_ms: number;
  /** Connecting (and initializing) an upstream server, and each health ping. */
  connect_timeout_ms: number;
  /** How often an upstream server that is up is pinged (ms). */
  health_interval_ms: number;
  /** Reconnecting a server that is down: the first wait and the longest (doubling in between). */
  backoff: { initial_ms: number; max_ms: number };
  /** A session left without a request this long is closed (ms). */
  session_idle_ms: number;
  max_sessions: number;
  /**
   * Who may use what: `server__tool` globs (`*` any run of characters). `default` for callers without an entry; an
   * account's and its key's entries (here or set through the admin API) must both allow a tool.
   */
  access: { default: string[]; accounts: Record<string, string[]>; keys: Record<string, string[]> };
  /** Tool calls per key in a minute, across replicas (services.state); 0: no limit. */
  calls_per_minute: number;
  /** Keep tool arguments and results in the call log (off: only who, what, how long and how it ended). */
  record_payloads: boolean;
  /** Model calls one Responses request with mcp tools may make; the last may not call tools. */
  max_tool_rounds: number;
}

const name = { type: 'string', pattern: '^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*$', maxLength: 40 };
const pattern = { type: 'string', minLength: 1, maxLength: 200, pattern: '^[^\\s]+$' };
const patterns = { type: 'array', items: pattern, maxItems: 1000 };
const credits = { type: 'number', minimum: 0, maximum: 1_000_000 };
const common = {
  name,
  price_per_call: { ...credits, default: 0 },
  tool_prices: { type: 'object', propertyNames: pattern, additionalProperties: credits, default: {} },
  timeout_ms: { type: 'integer', minimum: 100, maximum: 3_600_000 },
};

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    servers: {
      type: 'array',
      default: [],
      maxItems: 100,
      items: {
        // One object schema (defaults are not applied under oneOf); oneOf only says which transport.
        type: 'object',
        additionalProperties: false,
        required: ['name'],
        properties: {
          ...common,
          url: { type: 'string', pattern: '^https?://' },
          headers: { type: 'object', additionalProperties: { type: 'string' } },
          command: { type: 'string', minLength: 1 },
          args: { type: 'array', items: { type: 'string' } },
          env: { type: 'object', additionalProperties: { type: 'string' } },
          cwd: { type: 'string' },
        },
        oneOf: [
          { required: ['url'], not: { anyOf: ['command', 'args', 'env', 'cwd'].map((k) => ({ required: [k] })) } },
          { required: ['command'], not: { anyOf: ['url', 'headers'].map((k) => ({ required: [k] })) } },
        ],
      },
    },
    path: { type: 'string', pattern: '^/[A-Za-z0-9/_-]*$', default: '/mcp' },
    timeout_ms: { type: 'integer', minimum: 100, maximum: 3_600_000, default: 60_000 },
    connect_timeout_ms: { type: 'integer', minimum: 100, maximum: 600_000, default: 10_000 },
    health_interval_ms: { type: 'integer', minimum: 100, maximum: 3_600_000, default: 15_000 },
    backoff: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        initial_ms: { type: 'integer', minimum: 10, maximum: 600_000, default: 500 },
        max_ms: { type: 'integer', minimum: 10, maximum: 3_600_000, default: 30_000 },
      },
    },
    session_idle_ms: { type: 'integer', minimum: 1000, maximum: 86_400_000, default: 1_800_000 },
    max_sessions: { type: 'integer', minimum: 1, maximum: 1_000_000, default: 10_000 },
    access: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        default: { ...patterns, default: ['*'] },
        accounts: { type: 'object', additionalProperties: patterns, default: {} },
        keys: { type: 'object', additionalProperties: patterns, default: {} },
      },
    },
    calls_per_minute: { type: 'integer', minimum: 0, maximum: 1_000_000_000, default: 0 },
    record_payloads: { type: 'boolean', default: false },
    max_tool_rounds: { type: 'integer', minimum: 2, maximum: 32, default: 8 },
  },
};
