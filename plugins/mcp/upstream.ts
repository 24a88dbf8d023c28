/**
 * @module
 * One upstream MCP server as the gateway keeps it: an SDK Client over Streamable HTTP or stdio (a process the gateway
 * starts), connected at setup, pinged while up, reconnected (restarted) with doubling backoff while down, closed (the
 * process stopped) on close. Its tools, prompts and resources are kept listed (refreshed on its list-changed
 * notifications); while down it lists nothing and every call fails at once with a clear error, never a hang.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  McpError,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
  type Prompt,
  type Resource,
  type ResourceTemplate,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { PluginServices } from '../../src/plugin';

type Logger = PluginServices['logger'];
import { isStdio, type ServerConfig } from './schema';
import { redactor } from './secrets';

export type UpstreamStatus = 'connecting' | 'up' | 'down' | 'stopped';
export type ListKind = 'tools' | 'prompts' | 'resources';

export interface UpstreamOptions {
  connectTimeoutMs: number;
  healthIntervalMs: number;
  backoff: { initial_ms: number; max_ms: number };
  logger: Logger;
  /** Told when what the server lists changed (it came up, went down, or said so). */
  changed(server: string, kind: ListKind): void;
}

/** The lists an upstream server offers, as it named them. */
export interface Listed {
  tools: Tool[];
  prompts: Prompt[];
  resources: Resource[];
  templates: ResourceTemplate[];
}

const EMPTY: Listed = { tools: [], prompts: [], resources: [], templates: [] };
/** Pages of one list read at most (a server that pages forever is cut off). */
const MAX_PAGES = 50;

/** The JSON-RPC codes of a connection the SDK saw close and of a request it timed out. */
const CONNECTION_CLOSED = -32000;

export class Upstream {
  status: UpstreamStatus = 'connecting';
  /** Why it is down, with the operator's secrets cut out (clients may see it). */
  lastError: string | null = null;
  listed: Listed = EMPTY;
  /** When it last came up or went down (ms). */
  since = Date.now();
  restarts = 0;
  private client: Client | null = null;
  private failures = 0;
  private timer: NodeJS.Timeout | null = null;
  readonly redact: (text: string) => string;

  constructor(
    readonly config: ServerConfig,
    private readonly opts: UpstreamOptions,
  ) {
    this.redact = redactor(config);
  }

  /** Read through a method: TypeScript would narrow the field across the awaits that may change it. */
  private get stopped(): boolean {
    return this.status === 'stopped';
  }

  get name(): string {
    return this.config.name;
  }

  start(): void {
    void this.connect();
  }

  /** The connected client, or a clear error now (never a wait for a server that is down). */
  connected(): Client {
    if (this.status === 'up' && this.client) return this.client;
    throw new UpstreamDown(this.name, this.lastError ?? this.status);
  }

  /** A server's answer with the operator's secrets cut out (a tool may echo what it was configured with). */
  redactResult<T>(r: T): T {
    const json = JSON.stringify(r);
    const cut = this.redact(json);
    return cut === json ? r : (JSON.parse(cut) as T);
  }

  /** A call on the client failed: a transport failure (not the server's JSON-RPC answer) means it is down. */
  failed(e: unknown): void {
    const closed =
      e instanceof McpError ? e.code === CONNECTION_CLOSED : !(e instanceof Error && e.name === 'AbortError');
    if (closed && this.status === 'up') this.lost(describe(e, this.redact));
  }

  async close(): Promise<void> {
    this.status = 'stopped';
    if (this.timer) clearTimeout(this.timer);
    const c = this.client;
    this.client = null;
    await c?.close().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    if (this.status === 'stopped') return;
    const client = new Client({ name: 'model-gateway', version: '1' }, { capabilities: {} });
    for (const [schema, kind] of [
      [ToolListChangedNotificationSchema, 'tools'],
      [PromptListChangedNotificationSchema, 'prompts'],
      [ResourceListChangedNotificationSchema, 'resources'],
    ] as const)
      client.setNotificationHandler(schema, () => this.refresh(client, kind));
    client.onclose = () => {
      if (this.client === client) this.lost('the connection closed');
    };
    try {
      await client.connect(this.transport(), { timeout: this.opts.connectTimeoutMs });
      this.listed = await listAll(client, this.opts.connectTimeoutMs);
    } catch (e) {
      await client.close().catch(() => undefined);
      return this.down(describe(e, this.redact));
    }
    if (this.stopped) return void client.close().catch(() => undefined);
    this.client = client;
    this.failures = 0;
    this.setStatus('up', null);
    this.opts.logger.info({ server: this.name }, 'MCP server up');
    for (const kind of ['tools', 'prompts', 'resources'] as const) this.opts.changed(this.name, kind);
    this.schedule(this.opts.healthIntervalMs, () => this.ping(client));
  }

  private transport(): Transport {
    const c = this.config;
    if (isStdio(c)) {
      const t = new StdioClientTransport({
        command: c.command,
        args: c.args ?? [],
        env: { ...getDefaultEnvironment(), ...c.env },
        stderr: 'pipe',
        ...(c.cwd ? { cwd: c.cwd } : {}),
      });
      // What the process says on stderr goes to the gateway's log (its secrets cut, each chunk bounded).
      t.stderr?.on('data', (chunk: Buffer) =>
        this.opts.logger.info(
          { server: this.name, stderr: this.redact(chunk.toString('utf8')).slice(0, 1000) },
          'MCP server stderr',
        ),
      );
      return t;
    }
    return new StreamableHTTPClientTransport(new URL(c.url), {
      requestInit: { headers: c.headers ?? {} },
      // The gateway reconnects (a new session) itself; the SDK's own retries of its GET stream would only hide it.
      reconnectionOptions: {
        maxReconnectionDelay: 30_000,
        initialReconnectionDelay: 1000,
        reconnectionDelayGrowFactor: 2,
        maxRetries: 0,
      },
    });
  }

  private async ping(client: Client): Promise<void> {
    if (this.client !== client) return;
    try {
      await client.ping({ timeout: this.opts.connectTimeoutMs });
      if (this.client === client) this.schedule(this.opts.healthIntervalMs, () => this.ping(client));
    } catch (e) {
      if (this.client === client) this.lost(describe(e, this.redact));
    }
  }

  private async refresh(client: Client, kind: ListKind): Promise<void> {
    try {
      const fresh = await listKind(client, kind, this.opts.connectTimeoutMs);
      if (this.client !== client) return;
      this.listed = { ...this.listed, ...fresh };
      this.opts.changed(this.name, kind);
    } catch (e) {
      this.failed(e);
    }
  }

  /** It was up and is not: forget its lists (clients are told), close what is left, reconnect with backoff. */
  private lost(reason: string): void {
    const c = this.client;
    this.client = null;
    void c?.close().catch(() => undefined);
    this.opts.logger.warn({ server: this.name, reason }, 'MCP server down');
    this.down(reason);
    for (const kind of ['tools', 'prompts', 'resources'] as const) this.opts.changed(this.name, kind);
  }

  private down(reason: string): void {
    if (this.status === 'stopped') return;
    this.listed = EMPTY;
    this.setStatus('down', reason);
    const { initial_ms, max_ms } = this.opts.backoff;
    const wait = Math.min(max_ms, initial_ms * 2 ** Math.min(this.failures++, 20));
    this.schedule(wait, () => {
      this.restarts++;
      return this.connect();
    });
  }

  private setStatus(status: UpstreamStatus, error: string | null): void {
    if (this.status !== status) this.since = Date.now();
    this.status = status;
    this.lastError = error;
  }

  private schedule(ms: number, fn: () => Promise<void>): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.status === 'stopped') return;
    this.timer = setTimeout(() => void fn(), ms);
    this.timer.unref();
  }
}

/** A server that is down (or not yet up): the call is not made. */
export class UpstreamDown extends Error {
  constructor(
    readonly server: string,
    readonly reason: string,
  ) {
    super(`The MCP server '${server}' is unavailable (${reason})`);
  }
}

/** Everything the server declares it offers. */
async function listAll(client: Client, timeout: number): Promise<Listed> {
  const caps = client.getServerCapabilities() ?? {};
  const kinds = (['tools', 'prompts', 'resources'] as const).filter((k) => caps[k] !== undefined);
  const parts = await Promise.all(kinds.map((k) => listKind(client, k, timeout)));
  return Object.assign({ ...EMPTY }, ...parts) as Listed;
}

/** One kind of list, page by page (resources with their templates). */
async function listKind(client: Client, kind: ListKind, timeout: number): Promise<Partial<Listed>> {
  const o = { timeout };
  const page = (c: string | undefined) => (c ? { cursor: c } : {});
  if (kind === 'tools') return { tools: await pages(async (c) => paged(await client.listTools(page(c), o), 'tools')) };
  if (kind === 'prompts')
    return { prompts: await pages(async (c) => paged(await client.listPrompts(page(c), o), 'prompts')) };
  return {
    resources: await pages(async (c) => paged(await client.listResources(page(c), o), 'resources')),
    templates: await pages(async (c) => paged(await client.listResourceTemplates(page(c), o), 'resourceTemplates')),
  };
}

function paged<K extends string, T>(r: { [k in K]: T[] } & { nextCursor?: string }, key: K) {
  return { items: r[key], next: r.nextCursor };
}

async function pages<T>(read: (cursor?: string) => Promise<{ items: T[]; next?: string }>): Promise<T[]> {
  const all: T[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < MAX_PAGES; i++) {
    const p = await read(cursor);
    all.push(...p.items);
    if (!(cursor = p.next)) break;
  }
  return all;
}

/** A failure as clients may read it: its message with the server's configured secrets cut out, bounded. */
export function describe(e: unknown, redact: (s: string) => string): string {
  const msg = e instanceof Error ? e.message : String(e);
  return redact(msg).slice(0, 300);
}
