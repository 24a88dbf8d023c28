import type Koa from 'koa';
import type { SharedServices } from '../pipeline/shared-services';
import type { GatewayState } from '../pipeline/state';
import type { ChatCompletion } from '../types/openai';
import { splitChatRequest } from './chat-request';
import { nextRound, openRemoteTools, totalUsage, type RemoteRun } from './responses/remote-rounds';
import type { ParsedRequest } from './run-operation';

/**
 * Remote MCP tools on chat (issue 50; Responses does the same in its own terms, ./responses/remote-rounds.ts): a chat
 * request may declare `{type: "mcp", server_label, allowed_tools, require_approval: "never"}` in `tools`; the gateway
 * runs the calls the model makes, one round through the chain each, and the completion carries what it did in
 * `mcp_output` (the Responses API's `mcp_list_tools` and `mcp_call` items), its usage the rounds' sum.
 */
export interface ChatParsed extends ParsedRequest {
  remote?: RemoteRun;
}

export async function parseWithRemoteTools(
  ctx: Koa.Context,
  shared: SharedServices,
  body: Record<string, unknown>,
  limits: { defaultTimeoutS: number; maxTimeoutS: number },
): Promise<ChatParsed> {
  const opened = await openRemoteTools(ctx, shared, body, 'chat');
  return opened ? { ...splitChatRequest(opened.body, limits), remote: opened.run } : splitChatRequest(body, limits);
}

/** The next round when the model called remote tools only (they are called first), else null at once. */
export function nextChatRound(s: GatewayState, p: ChatParsed): Promise<ChatParsed | null> | null {
  const remote = p.remote;
  return remote ? nextRound(s, p.request, remote).then((request) => request && { ...p, request }) : null;
}

/** The completion as the client gets it after remote tool rounds. */
export function withRemoteOutput(body: ChatCompletion, run: RemoteRun): ChatCompletion & { mcp_output: unknown[] } {
  const usage = totalUsage(body.usage ?? undefined, run.usage);
  return { ...body, ...(usage ? { usage } : {}), mcp_output: run.items };
}
