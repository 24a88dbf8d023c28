/**
 * @module
 * The mcp plugin as an admin section (the `admin.sections` slot, decisions 0048 and 0054): a key's or an account's
 * tool allowlist (the same as PUT /v1/mcp/access/...), and two read-only views: the servers with their health and
 * tools, and the call log with its filters. The admin API (routes.ts) reads the same functions.
 */
import { bodyChecker, type AdminSection, type SectionView, type SettingsField } from '../../src/plugin';
import { accessBody } from './bodies';
import { bodies } from './generated/bodies';
import type { Access } from './governance';
import type { CallLog, CallQuery, Subject } from './store/repo';
import type { Upstreams } from './upstreams';

const checkAccess = bodyChecker<{ tools: string[] | null }>(bodies.access);

/** The servers, their health and the qualified names of their tools (`server__tool`). */
export function serversJson(upstreams: Upstreams) {
  const tools = upstreams.tools();
  return upstreams.health().map((h) => ({
    ...h,
    tool_names: tools.filter((t) => t.name.startsWith(`${h.name}__`)).map((t) => t.name),
  }));
}

const ACCESS: readonly SettingsField[] = [
  {
    path: 'tools',
    label: 'MCP tools allowed',
    type: 'list',
    placeholder: "what gateway.yaml's access says",
    empty: 'no tool',
    help: "server__tool globs (github__*); not set (null): gateway.yaml's access; no tool: an empty list ([])",
  },
];

const CALL_FILTERS: readonly SettingsField[] = [
  { path: 'server', label: 'Server', type: 'text' },
  { path: 'tool', label: 'Tool', type: 'text', help: 'Its name on the server (not server__tool)' },
  {
    path: 'outcome',
    label: 'Outcome',
    type: 'choice',
    choices: ['ok', 'error', 'failed', 'refused', 'cancelled', 'timeout'],
  },
  { path: 'key', label: 'Key hash', type: 'text' },
  { path: 'account', label: 'Account', type: 'text' },
];

const PAGE = 50;

function callsView(log: CallLog): SectionView {
  return {
    title: 'Tool calls',
    description: 'Every governed tool call, newest first (refused ones too).',
    filters: CALL_FILTERS,
    async read(q) {
      const offset = Math.max(Number.parseInt(q.cursor ?? '0', 10) || 0, 0);
      const query: CallQuery = {
        server: q.server || undefined,
        tool: q.tool || undefined,
        outcome: q.outcome || undefined,
        keyHash: q.key || undefined,
        accountId: q.account || undefined,
        limit: PAGE + 1,
        offset,
      };
      const rows = await log.list(query);
      return { data: rows.slice(0, PAGE), next: rows.length > PAGE ? String(offset + PAGE) : null };
    },
  };
}

export function mcpSection(d: { upstreams: Upstreams; access: Access; log: CallLog }): AdminSection {
  return {
    name: 'mcp',
    title: 'MCP tools',
    description: "A key's or an account's MCP tool allowlist; the servers, their tools and the call log.",
    subjects: ['key', 'account'],
    fields: ACCESS,
    schema: accessBody,
    audit: 'mcp.access',
    read: async (subject, id) => ({ tools: await d.access.get(subject as Subject, id) }),
    async write(subject, id, body) {
      const { tools } = checkAccess(body);
      await d.access.set(subject as Subject, id, tools);
      return { tools };
    },
    views: {
      servers: {
        title: 'Servers',
        description: 'The MCP servers of gateway.yaml, their health and their tools.',
        filters: [],
        read: async () => ({ data: serversJson(d.upstreams), next: null }),
      },
      calls: callsView(d.log),
    },
  };
}
