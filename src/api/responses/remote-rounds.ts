import type Koa from 'koa';
import { getAuthenticate } from '../../auth/contract';
import { errors } from '../../errors';
import { randomId } from '../../ids';
import type { SharedServices } from '../../pipeline/shared-services';
import type { GatewayState } from '../../pipeline/state';
import type { ChatMessage, ChatRequest, Usage } from '../../types/openai';
import type { OutputItem } from '../../types/responses';
import { REMOTE_TOOLS, type RemoteToolDecl, type RemoteToolSet } from './remote-tools';

/** The remote tools of one request, and what their rounds have done so far. */
export interface RemoteRun {
  byModelName: Map<string, { set: RemoteToolSet; tool: string }>;
  /** mcp_list_tools first, then each mcp_call as it was made: they lead the response's output. */
  items: OutputItem[];
  /** Rounds made (a round is a model call through the chain). */
  round: number;
  maxRounds: number;
  /** The usage of each round before the last. */
  usage: Usage[];
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The chat name pattern (^[a-zA-Z0-9_-]{1,64}$) for `label__tool`. */
const chatName = (name: string) => name.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);

/** Whether a body declares `mcp` tools (checked before anything async: chat's parse stays synchronous without). */
export function declaresRemoteTools(body: unknown): boolean {
  // Called before the body is known to be an object: `null` or an array is the parser's 400 to give, not a 500 here.
  return isRecord(body) && Array.isArray(body.tools) && body.tools.some((t) => isRecord(t) && t.type === 'mcp');
}

/**
 * The request's `mcp` tools opened through the mcp plugin: the body with them as function tools (named
 * `label__tool`, in the endpoint's own shape: chat's `{type, function: {...}}` or Responses' flat one), and the run
 * that maps the model's calls back. Null when it declares none.
 */
export async function openRemoteTools(
  ctx: Koa.Context,
  shared: SharedServices,
  body: Record<string, unknown>,
  shape: 'chat' | 'responses',
): Promise<{ body: Record<string, unknown>; run: RemoteRun } | null> {
  const tools = Array.isArray(body.tools) ? (body.tools as unknown[]) : [];
  const decls = tools.filter((t): t is RemoteToolDecl => isRecord(t) && t.type === 'mcp');
  if (decls.length === 0) return null;
  const remote = shared.get(REMOTE_TOOLS);
  if (!remote) throw errors.invalidRequest('mcp tools need the mcp plugin in the chain', 'tools', 'unsupported_tool');
  if (body.stream === true)
    throw errors.invalidRequest('stream is not supported with mcp tools yet', 'stream', 'unsupported_parameter');
  const auth = getAuthenticate(shared);
  const principal = auth ? await auth(ctx) : undefined;
  const run: RemoteRun = { byModelName: new Map(), items: [], round: 0, maxRounds: remote.maxRounds, usage: [] };
  const functions: unknown[] = [];
  for (const decl of decls) {
    const set = await remote.open(decl, principal);
    run.items.push({ type: 'mcp_list_tools', id: randomId('mcpl_'), server_label: set.serverLabel, tools: set.tools });
    for (const t of set.tools) {
      const name = chatName(`${set.serverLabel}__${t.name}`);
      run.byModelName.set(name, { set, tool: t.name });
      const fn = { name, description: t.description, parameters: t.input_schema };
      functions.push(shape === 'chat' ? { type: 'function', function: fn } : { type: 'function', ...fn });
    }
  }
  return {
    body: { ...body, tools: [...tools.filter((t) => !decls.includes(t as RemoteToolDecl)), ...functions] },
    run,
  };
}

/**
 * When the model called only remote tools: make the calls (in order; each governed and recorded by the mcp plugin),
 * and answer the next round's request (the calls and their results appended; the last round may not call tools).
 * Null when there is nothing to run: the model answered, or called a tool of the client's own.
 */
export async function nextRound(s: GatewayState, request: ChatRequest, run: RemoteRun): Promise<ChatRequest | null> {
  const result = s.result;
  if (result?.kind !== 'completion' || run.round + 1 >= run.maxRounds) return null;
  const message = result.body.choices[0]?.message;
  const calls = message?.tool_calls ?? [];
  if (calls.length === 0 || !calls.every((c) => run.byModelName.has(c.function.name))) return null;
  if (result.body.usage) run.usage.push(result.body.usage);
  const results: ChatMessage[] = [];
  for (const c of calls) {
    const { set, tool } = run.byModelName.get(c.function.name)!;
    const r = await set.call(tool, c.function.arguments, s.signal, s.requestId);
    run.items.push({
      type: 'mcp_call',
      id: randomId('mcp_'),
      server_label: set.serverLabel,
      name: tool,
      arguments: c.function.arguments,
      output: r.output,
      error: r.error,
      approval_request_id: null,
    });
    results.push({ role: 'tool', tool_call_id: c.id, content: r.output ?? `Error: ${r.error ?? 'failed'}` });
  }
  run.round++;
  const assistant: ChatMessage = { role: 'assistant', content: message?.content ?? null, tool_calls: calls };
  const next: ChatRequest = { ...request, messages: [...request.messages, assistant, ...results] };
  if (run.round + 1 >= run.maxRounds) next.tool_choice = 'none';
  return next;
}

/** The response's usage: the last round's plus every round's before it (tokens and cost). */
export function totalUsage(last: Usage | undefined, before: Usage[]): Usage | undefined {
  if (!last || before.length === 0) return last;
  const sum = (f: (u: Usage) => number | undefined) => before.reduce((n, u) => n + (f(u) ?? 0), f(last) ?? 0);
  const cost = before.every((u) => typeof u.cost === 'number') && typeof last.cost === 'number';
  return {
    ...last,
    prompt_tokens: sum((u) => u.prompt_tokens),
    completion_tokens: sum((u) => u.completion_tokens),
    total_tokens: sum((u) => u.total_tokens),
    ...(cost ? { cost: sum((u) => u.cost) } : {}),
  };
}
