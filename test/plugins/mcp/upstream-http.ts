/**
 * A Streamable HTTP MCP server built with the official SDK for the mcp plugin's tests, on a loopback port that it
 * keeps across stop() and start() (an upstream killed mid-session that comes back). Every request must carry
 * `Authorization: Bearer <secret>` (the gateway's configured header), else 401.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export class HttpMcpUpstream {
  private http: Server | null = null;
  private port = 0;
  private readonly sessions = new Map<string, StreamableHTTPServerTransport>();
  /** Calls of `slow` that saw their request cancelled. */
  cancelled = 0;
  calls = 0;
  unauthorized = 0;

  constructor(readonly secret: string) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  async start(): Promise<this> {
    this.http = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((r) => this.http!.listen(this.port, '127.0.0.1', r));
    this.port = (this.http.address() as AddressInfo).port;
    return this;
  }

  /** Gone at once: its sockets cut, its sessions forgotten (as a crashed process). */
  async stop(): Promise<void> {
    const h = this.http;
    this.http = null;
    if (!h) return;
    h.closeAllConnections();
    await new Promise<void>((r) => h.close(() => r()));
    for (const t of this.sessions.values()) await t.close().catch(() => undefined);
    this.sessions.clear();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.headers.authorization !== `Bearer ${this.secret}`) {
      this.unauthorized++;
      res.writeHead(401).end();
      return;
    }
    const sid = req.headers['mcp-session-id'];
    let t = typeof sid === 'string' ? this.sessions.get(sid) : undefined;
    if (typeof sid === 'string' && !t) {
      res.writeHead(404).end();
      return;
    }
    if (!t) {
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void this.sessions.set(id, transport),
      });
      t = transport;
      await this.server().connect(t);
    }
    await t.handleRequest(req, res);
  }

  private server(): McpServer {
    const s = new McpServer({ name: 'web', version: '1.0.0' });
    const text = (t: string) => ({ content: [{ type: 'text' as const, text: t }] });
    s.registerTool('add', { description: 'Add two numbers', inputSchema: { a: z.number(), b: z.number() } }, (a) => {
      this.calls++;
      return text(String(a.a + a.b));
    });
    s.registerTool('slow', { description: 'Report progress, then wait until cancelled' }, async (extra) => {
      const token = extra._meta?.progressToken;
      for (let i = 1; i <= 2 && token !== undefined; i++)
        await extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress: i, total: 10, message: `step ${i}` },
        });
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 20_000);
        extra.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          this.cancelled++;
          resolve();
        });
      });
      return text('done');
    });
    s.registerTool('leak', { description: 'Fail with the header it was sent' }, () => {
      throw new Error(`upstream refused token ${this.secret}`);
    });
    s.registerResource('readme', 'docs://readme', { mimeType: 'text/plain' }, (uri) => ({
      contents: [{ uri: uri.href, text: 'read me' }],
    }));
    return s;
  }
}
