/**
 * @module
 * The MCP server a session on /mcp talks to (the SDK's low-level Server): the aggregated tools, prompts and resources
 * that the session's key may use (namespaced, ./names.ts), with the servers' health in each listing's `_meta`, tool
 * calls governed by ./calls.ts, prompts and resources read from their server within the same timeout.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../../src/plugin';
import { callTool, type CallDeps } from './calls';
import type { Access } from './governance';
import { qualified, SEPARATOR } from './names';
import type { Upstream } from './upstream';
import { notAllowed, toClientError } from './client-errors';

/** Where a listing says which servers are up: `_meta["gateway/servers"]` (what is down lists nothing). */
export const SERVERS_META = 'gateway/servers';

export interface SessionDeps extends CallDeps {
  access: Access;
}

export function sessionServer(deps: SessionDeps, principal: Principal): Server {
  const server = new Server(
    { name: 'model-gateway', version: '1' },
    {
      capabilities: { tools: { listChanged: true }, prompts: { listChanged: true }, resources: { listChanged: true } },
      instructions: `Tools of several MCP servers, named server${SEPARATOR}tool.`,
    },
  );
  const { upstreams } = deps;
  const allows = () => deps.access.allows(principal);
  const meta = () => ({ [SERVERS_META]: upstreams.health() });
  // A server's resources go to callers who may use all of it (`server__*` in their allowlist).
  const wholeServer = (uri: string, ok: (n: string) => boolean) => ok(qualified(uri.split('+')[0], '*'));

  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const ok = await allows();
    return { tools: upstreams.tools().filter((t) => ok(t.name)), _meta: meta() };
  });
  server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
    const token = req.params._meta?.progressToken;
    return callTool(
      deps,
      {
        principal,
        allows: await allows(),
        signal: extra.signal,
        requestId: (extra.authInfo?.extra?.requestId as string | null | undefined) ?? null,
        ...(token !== undefined
          ? {
              onprogress: (p) =>
                void extra
                  .sendNotification({ method: 'notifications/progress', params: { ...p, progressToken: token } })
                  .catch(() => undefined),
            }
          : {}),
      },
      req.params.name,
      req.params.arguments,
    );
  });
  server.setRequestHandler(ListPromptsRequestSchema, async () => {
    const ok = await allows();
    return { prompts: upstreams.prompts().filter((p) => ok(p.name)), _meta: meta() };
  });
  server.setRequestHandler(GetPromptRequestSchema, async (req, extra) => {
    if (!(await allows())(req.params.name)) throw notAllowed(req.params.name);
    return upstreamCall(deps, req.params.name, 'name', (u, name) =>
      u.connected().getPrompt({ ...req.params, name }, { signal: extra.signal, timeout: deps.timeoutMs }),
    );
  });
  server.setRequestHandler(ListResourcesRequestSchema, async () => {
    const ok = await allows();
    return { resources: upstreams.resources().filter((r) => wholeServer(r.uri, ok)), _meta: meta() };
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => {
    const ok = await allows();
    return { resourceTemplates: upstreams.templates().filter((r) => wholeServer(r.uriTemplate, ok)), _meta: meta() };
  });
  server.setRequestHandler(ReadResourceRequestSchema, async (req, extra) => {
    if (!wholeServer(req.params.uri, await allows())) throw notAllowed(req.params.uri);
    return upstreamCall(deps, req.params.uri, 'uri', (u, uri) =>
      u.connected().readResource({ ...req.params, uri }, { signal: extra.signal, timeout: deps.timeoutMs }),
    );
  });
  return server;
}

/** A prompt or resource read from its server: a clear error when it is down or fails, its secrets cut out. */
async function upstreamCall<T>(
  deps: SessionDeps,
  q: string,
  kind: 'name' | 'uri',
  fn: (u: Upstream, own: string) => Promise<T>,
): Promise<T> {
  let u: Upstream | undefined;
  try {
    const r = deps.upstreams.resolve(q, kind);
    u = r.upstream;
    return u.redactResult(await fn(u, r.name));
  } catch (e) {
    u?.failed(e);
    throw toClientError(e, u);
  }
}
