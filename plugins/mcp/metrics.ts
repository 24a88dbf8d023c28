/**
 * @module
 * The mcp plugin's metrics, by server and tool (names the operator configured and the servers list; never a key).
 */
import { Counter, Gauge, Histogram, type Registry } from '../../src/plugin';
import type { Upstreams } from './upstreams';

export type McpMetrics = ReturnType<typeof mcpMetrics>;

export function mcpMetrics(registry: Registry, upstreams: Upstreams) {
  const registers = [registry];
  return {
    calls: new Counter({
      name: 'gateway_mcp_tool_calls_total',
      help: 'MCP tool calls through the gateway, by server, tool and outcome',
      labelNames: ['server', 'tool', 'outcome'] as const,
      registers,
    }),
    duration: new Histogram({
      name: 'gateway_mcp_tool_call_duration_seconds',
      help: 'How long MCP tool calls took upstream, by server and tool',
      labelNames: ['server', 'tool'] as const,
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    }),
    up: new Gauge({
      name: 'gateway_mcp_server_up',
      help: 'Whether an upstream MCP server is connected (1) or not (0)',
      labelNames: ['server'] as const,
      registers,
      collect() {
        for (const h of upstreams.health()) this.set({ server: h.name }, h.status === 'up' ? 1 : 0);
      },
    }),
    sessions: new Gauge({ name: 'gateway_mcp_sessions', help: 'Open MCP sessions on /mcp', registers }),
  };
}
