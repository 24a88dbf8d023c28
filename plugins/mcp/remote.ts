/**
 * @module
 * Remote MCP tools on any model (`REMOTE_TOOLS`): a Responses request's `{type: "mcp", server_label, allowed_tools,
 * require_approval: "never"}` opened for its key: the server's tools within `allowed_tools` and the key's allowlist,
 * listed to the model, and each call the model makes run as a governed call (./calls.ts: allowlist, rate limit,
 * price, record). A refused or failed call is the model's to read (`mcp_call.error`), not the request's failure.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { errors, type Principal, type RemoteToolDecl, type RemoteTools } from '../../src/plugin';
import { callTool } from './calls';
import { qualified } from './names';
import type { SessionDeps } from './server';

export function remoteTools(deps: SessionDeps, maxRounds: number): RemoteTools {
  return {
    maxRounds,
    async open(decl, principal) {
      if (!principal) throw errors.unauthorized('missing_api_key', 'mcp tools need a gateway key');
      const label = checked(decl);
      const upstream = deps.upstreams.get(label);
      if (!upstream)
        throw errors.invalidRequest(`No MCP server '${label}' in this gateway`, 'tools.server_label', 'invalid_value');
      if (upstream.status !== 'up') throw errors.upstreamUnavailable(label, upstream.lastError ?? upstream.status);
      const allows = await deps.access.allows(principal);
      const only = toolNames(decl.allowed_tools);
      const may = (tool: string) => allows(qualified(label, tool)) && (only === null || only.has(tool));
      const tools = upstream.listed.tools.filter((t) => may(t.name));
      return {
        serverLabel: label,
        tools: tools.map((t) => ({
          name: t.name,
          ...(t.description ? { description: t.description } : {}),
          input_schema: t.inputSchema as Record<string, unknown>,
          annotations: t.annotations ?? null,
        })),
        call: (name, args, signal, requestId) => run(deps, principal, label, may, { name, args, signal, requestId }),
      };
    },
  };
}

function checked(decl: RemoteToolDecl): string {
  if (typeof decl.server_label !== 'string' || decl.server_label.length === 0)
    throw errors.invalidRequest('An mcp tool needs a server_label', 'tools.server_label', 'invalid_type');
  if (decl.server_url !== undefined || decl.connector_id !== undefined)
    throw errors.invalidRequest(
      'The gateway calls only the MCP servers of its config: name one by server_label, without server_url',
      'tools.server_url',
      'unsupported_tool',
    );
  if (decl.require_approval !== undefined && decl.require_approval !== 'never')
    throw errors.invalidRequest(
      'Only require_approval: "never" is supported',
      'tools.require_approval',
      'invalid_value',
    );
  return decl.server_label;
}

/** `allowed_tools` as a set of names (a list, or `{tool_names}`); null: every tool. */
function toolNames(v: unknown): Set<string> | null {
  const list = Array.isArray(v) ? v : (v as { tool_names?: unknown } | undefined)?.tool_names;
  if (v === undefined || v === null) return null;
  if (!Array.isArray(list) || !list.every((n) => typeof n === 'string'))
    throw errors.invalidRequest('allowed_tools must be a list of tool names', 'tools.allowed_tools', 'invalid_type');
  return new Set(list as string[]);
}

interface ModelCall {
  name: string;
  args: string;
  signal: AbortSignal;
  requestId: string;
}

async function run(
  deps: SessionDeps,
  principal: Principal,
  label: string,
  may: (tool: string) => boolean,
  c: ModelCall,
): Promise<{ output: string | null; error: string | null }> {
  let args: Record<string, unknown>;
  try {
    args = c.args ? (JSON.parse(c.args) as Record<string, unknown>) : {};
  } catch {
    return { output: null, error: 'The arguments are not JSON' };
  }
  const caller = { principal, signal: c.signal, requestId: c.requestId, allows: () => may(c.name) };
  try {
    const r = await callTool(deps, caller, qualified(label, c.name), args);
    const text = textOf(r);
    return r.isError ? { output: null, error: text || 'The tool failed' } : { output: text, error: null };
  } catch (e) {
    // Messages of the gateway's own errors: no secret in them (./client-errors.ts).
    return { output: null, error: e instanceof Error ? e.message : 'The call failed' };
  }
}

/** A tool result as the text a model reads: its text parts, else its structured content or parts as JSON. */
function textOf(r: CallToolResult): string {
  const texts = r.content.filter((c) => c.type === 'text').map((c) => c.text);
  if (texts.length > 0) return texts.join('\n');
  return JSON.stringify(r.structuredContent ?? r.content);
}
