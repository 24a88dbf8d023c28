/**
 * @module
 * The mcp plugin: one governed MCP endpoint for the tools of many MCP servers. `/mcp` speaks MCP over Streamable
 * HTTP (the official SDK; sessions.ts, server.ts) to clients holding a gateway key, and aggregates the upstream
 * servers of its config, over Streamable HTTP or stdio processes it supervises (upstream.ts, upstreams.ts): tools,
 * prompts and resources named `server__name` (names.ts). Every tool call passes the key's and account's allowlists,
 * the per-key rate limit and its price (governance.ts; charged through the credit plugin's `credit.charge`) and is
 * recorded (calls.ts, store/, metrics.ts). An admin API sets the allowlists and reads the call log (routes.ts). It
 * offers the servers to Responses requests that declare `{type: "mcp"}` tools (remote.ts, `tools.remote`). No step
 * on the chat chain. See README.md.
 *
 * @example
 * ```yaml
 * plugins:
 *   - auth
 *   - mcp:
 *       servers:
 *         - { name: docs, url: https://mcp.example/mcp, headers: { Authorization: "Bearer ${DOCS_MCP_TOKEN}" } }
 *         - { name: files, command: npx, args: [-y, "@modelcontextprotocol/server-filesystem", /srv/share] }
 *       access: { default: ["docs__*"] }
 *       calls_per_minute: 60
 *   - routing
 * ```
 */
import {
  ADMIN_GUARD,
  addReadinessCheck,
  adminSections,
  definePlugin,
  getAuthenticate,
  REMOTE_TOOLS,
} from '../../src/plugin';
import { callLimiter, pricer, Access } from './governance';
import { mcpMetrics } from './metrics';
import { payloadWriter } from './payloads';
import { remoteTools } from './remote';
import { registerMcpRoutes } from './routes';
import { mcpSection } from './section';
import { configSchema, type McpConfig } from './schema';
import { Sessions } from './sessions';
import { mcpMigrations } from './store/migrations';
import { AccessRepo, CallLog } from './store/repo';
import { Upstreams } from './upstreams';

export default definePlugin<McpConfig>({
  name: 'mcp',
  description: 'An MCP gateway: the tools of many MCP servers behind the gateway keys, governed and recorded.',
  // The endpoint authenticates with the auth plugin's keys: it comes earlier in the chain.
  requires: ['principal'],
  store: { migrations: mcpMigrations },
  configSchema,
  setup(config, services) {
    const { store, shared, logger } = services;
    const names = config.servers.map((s) => s.name);
    const twice = names.find((n, i) => names.indexOf(n) !== i);
    if (twice) throw new Error(`mcp: two servers are named '${twice}'`);
    const priced = config.servers.some((s) => s.price_per_call > 0 || Object.keys(s.tool_prices).length > 0);
    if (priced && !services.config.plugins.some((p) => p.name === 'credit'))
      throw new Error('mcp: priced servers (price_per_call, tool_prices) need the credit plugin in the chain');
    const upstreams = new Upstreams(config, logger);
    const metrics = mcpMetrics(services.metrics, upstreams);
    const access = new Access(new AccessRepo(store.db), config.access);
    const log = new CallLog(store.db);
    const deps = {
      upstreams,
      access,
      limit: callLimiter(services.state, config.calls_per_minute),
      price: pricer(config.servers),
      shared,
      log,
      metrics,
      logger,
      payload: payloadWriter(shared, config.record_payloads),
      timeoutMs: config.timeout_ms,
    };
    const sessions = new Sessions(deps, { idleMs: config.session_idle_ms, max: config.max_sessions, metrics, logger });
    const stopRelay = upstreams.onChange((kind) => sessions.changed(kind));
    const authenticate = getAuthenticate(shared);
    if (!authenticate) throw new Error('mcp: the MCP endpoint needs the auth plugin earlier in the chain');
    const admin = shared.get(ADMIN_GUARD);
    registerMcpRoutes(services.router, {
      path: config.path,
      sessions,
      authenticate,
      admin,
      upstreams,
      access,
      log,
      store,
    });
    adminSections(shared).register(mcpSection({ upstreams, access, log }));
    addReadinessCheck(shared, upstreams.readiness());
    shared.set(REMOTE_TOOLS, remoteTools(deps, config.max_tool_rounds));
    upstreams.start();
    return {
      async close() {
        stopRelay();
        await sessions.close();
        await upstreams.close();
      },
    };
  },
});
