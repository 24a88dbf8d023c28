/**
 * @module
 * The sessions of /mcp: one SDK Server and StreamableHTTPServerTransport per session, made at `initialize`, bound to
 * the key that made it (every request authenticates again; another key's requests to it are 404, as an unknown
 * session), told of upstream list changes, closed when the client deletes it, after `session_idle_ms` without a
 * request, or when the gateway closes. Sessions live in this process: behind a load balancer, route by the
 * Mcp-Session-Id header (docs/decisions/0060-mcp-gateway.md).
 */
import { randomUUID } from 'node:crypto';
import type Koa from 'koa';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { errors, pluginCode, readRaw, type Authenticate } from '../../src/plugin';
import type { PluginServices } from '../../src/plugin';

type Logger = PluginServices['logger'];
import type { McpMetrics } from './metrics';
import { sessionServer, type SessionDeps } from './server';
import type { ListKind } from './upstream';

interface Session {
  keyHash: string;
  server: Server;
  transport: StreamableHTTPServerTransport;
  lastSeen: number;
}

const BODY_LIMIT = 4 * 1024 * 1024;

export class Sessions {
  private readonly open = new Map<string, Session>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly deps: SessionDeps,
    private readonly opts: { idleMs: number; max: number; metrics: McpMetrics; logger: Logger },
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, Math.max(1000, opts.idleMs / 4)));
    this.sweeper.unref();
  }

  /** Tell every session that a list changed (the SDK sends it on the session's GET stream, if it has one). */
  changed(kind: ListKind): void {
    for (const s of this.open.values()) {
      const send =
        kind === 'tools'
          ? s.server.sendToolListChanged()
          : kind === 'prompts'
            ? s.server.sendPromptListChanged()
            : s.server.sendResourceListChanged();
      void send.catch(() => undefined);
    }
  }

  /** GET, POST and DELETE on the endpoint: authenticate, find or make the session, hand the request to the SDK. */
  handler(authenticate: Authenticate): Koa.Middleware {
    return async (ctx) => {
      const principal = await authenticate(ctx);
      const body = ctx.method === 'POST' ? parse(await readRaw(ctx.req, BODY_LIMIT, '4mb')) : undefined;
      const id = ctx.get('mcp-session-id');
      let s = id ? this.open.get(id) : undefined;
      // Another key's session is as unknown as a closed one (404: the client starts a new one).
      if (id && (!s || s.keyHash !== principal.keyHash))
        throw errors.notFound(pluginCode('session_not_found'), 'No such MCP session: initialize a new one');
      if (!s) {
        if (ctx.method !== 'POST') throw errors.invalidRequest('No Mcp-Session-Id: initialize first', null);
        if (this.open.size >= this.opts.max)
          throw errors.rateLimited(pluginCode('too_many_sessions'), 'Too many open MCP sessions', 60);
        s = await this.create(principal.keyHash, sessionServer(this.deps, principal));
      }
      s.lastSeen = Date.now();
      ctx.respond = false;
      // The request's id rides to the handlers (extra.authInfo) for the call log; the key is not in it.
      const auth = { token: '', clientId: 'gateway', scopes: [], extra: { requestId: ctx.state.requestId ?? null } };
      await s.transport.handleRequest(Object.assign(ctx.req, { auth }), ctx.res, body);
      // A POST that was not an initialize made no session: drop what was made for it.
      if (!s.transport.sessionId) await s.server.close().catch(() => undefined);
    };
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.all([...this.open.values()].map((s) => s.server.close().catch(() => undefined)));
    this.open.clear();
  }

  private async create(keyHash: string, server: Server): Promise<Session> {
    const s: Session = { keyHash, server, transport: undefined as never, lastSeen: Date.now() };
    s.transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => {
        this.open.set(sid, s);
        this.opts.metrics.sessions.set(this.open.size);
      },
    });
    s.transport.onclose = () => {
      const sid = s.transport.sessionId;
      if (sid && this.open.get(sid) === s) this.open.delete(sid);
      this.opts.metrics.sessions.set(this.open.size);
    };
    await server.connect(s.transport);
    return s;
  }

  private sweep(): void {
    const before = Date.now() - this.opts.idleMs;
    for (const s of this.open.values()) if (s.lastSeen < before) void s.server.close().catch(() => undefined);
  }
}

function parse(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw errors.invalidJson('the body is not JSON');
  }
}
