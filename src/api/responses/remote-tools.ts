import type { Principal } from '../../pipeline/state';
import type { McpListToolsItem } from '../../types/responses';

/**
 * Remote tools on any model (issue 50): a Responses request may declare `{type: "mcp", server_label, allowed_tools,
 * require_approval: "never"}`; the gateway lists that server's tools to the model as function tools, runs the calls
 * the model makes, and asks the model again with their results (./remote-rounds.ts), each round a request through the
 * whole chain. The mcp plugin offers the servers through `services.shared` under REMOTE_TOOLS; without it such a tool
 * is a 400.
 */
export interface RemoteToolDecl {
  type: 'mcp';
  server_label: string;
  /** Tool names (or `{tool_names}`): only these are listed to the model. */
  allowed_tools?: unknown;
  require_approval?: unknown;
  [k: string]: unknown;
}

/** What a call gave: the text the model reads, or the error it reads instead. */
export interface RemoteCallResult {
  output: string | null;
  error: string | null;
}

/** One declared server, opened for one caller: its tools (within the caller's allowlist) and how to call them. */
export interface RemoteToolSet {
  serverLabel: string;
  tools: McpListToolsItem['tools'];
  call(name: string, args: string, signal: AbortSignal, requestId: string): Promise<RemoteCallResult>;
}

export interface RemoteTools {
  /** Model rounds one request may make (the last one is told to answer: tool_choice none). */
  maxRounds: number;
  /** The declaration's server for the caller; throws a GatewayError (400 unknown server, 403, 502 down). */
  open(decl: RemoteToolDecl, principal: Principal | undefined): Promise<RemoteToolSet>;
}

export const REMOTE_TOOLS = 'tools.remote';
