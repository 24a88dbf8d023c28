/**
 * @module
 * Every upstream MCP server of the config, by name: what they list together (namespaced, ./names.ts), their health
 * for GET /ready and the listings, and who is told when a list changes (the open sessions).
 */
import type { Prompt, Resource, ResourceTemplate, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { ReadinessCheck } from '../../src/plugin';
import type { PluginServices } from '../../src/plugin';

type Logger = PluginServices['logger'];
import { qualified, qualifiedUri, splitQualified, splitUri } from './names';
import type { McpConfig } from './schema';
import { Upstream, UpstreamDown, type ListKind, type UpstreamStatus } from './upstream';

/** A server as listings and GET /v1/mcp/servers show it (no URL, command or header: those are the operator's). */
export interface ServerHealth {
  name: string;
  transport: 'http' | 'stdio';
  status: UpstreamStatus;
  error: string | null;
  since: number;
  restarts: number;
  tools: number;
}

export class Upstreams {
  private readonly byName = new Map<string, Upstream>();
  private readonly listeners = new Set<(kind: ListKind) => void>();

  constructor(config: McpConfig, logger: Logger) {
    const changed = (_server: string, kind: ListKind) => {
      for (const l of this.listeners) l(kind);
    };
    for (const s of config.servers) {
      const opts = {
        connectTimeoutMs: config.connect_timeout_ms,
        healthIntervalMs: config.health_interval_ms,
        backoff: config.backoff,
        logger,
        changed,
      };
      this.byName.set(s.name, new Upstream(s, opts));
    }
  }

  start(): void {
    for (const u of this.byName.values()) u.start();
  }

  close(): Promise<unknown> {
    return Promise.all([...this.byName.values()].map((u) => u.close()));
  }

  /** Be told when any server's tools, prompts or resources change; returns the function that stops it. */
  onChange(fn: (kind: ListKind) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  get(name: string): Upstream | undefined {
    return this.byName.get(name);
  }

  /** The server a qualified name (`server__tool`) or URI (`server+uri`) names, and its own name there. */
  resolve(q: string, kind: 'name' | 'uri'): { upstream: Upstream; name: string } {
    const parts = kind === 'name' ? splitQualified(q) : splitUri(q);
    const upstream = parts && this.byName.get(parts[0]);
    if (!parts || !upstream) throw new UnknownName(q);
    return { upstream, name: parts[1] };
  }

  health(): ServerHealth[] {
    return [...this.byName.values()].map((u) => ({
      name: u.name,
      transport: 'command' in u.config ? 'stdio' : 'http',
      status: u.status,
      error: u.lastError,
      since: u.since,
      restarts: u.restarts,
      tools: u.listed.tools.length,
    }));
  }

  tools(): Tool[] {
    return this.each((u) => u.listed.tools.map((t) => ({ ...t, name: qualified(u.name, t.name) })));
  }

  prompts(): Prompt[] {
    return this.each((u) => u.listed.prompts.map((p) => ({ ...p, name: qualified(u.name, p.name) })));
  }

  resources(): Resource[] {
    return this.each((u) => u.listed.resources.map((r) => ({ ...r, uri: qualifiedUri(u.name, r.uri) })));
  }

  templates(): ResourceTemplate[] {
    return this.each((u) =>
      u.listed.templates.map((r) => ({ ...r, uriTemplate: qualifiedUri(u.name, r.uriTemplate) })),
    );
  }

  /** GET /ready: degraded (still 200) while a configured server is down, naming it. */
  readiness(): ReadinessCheck {
    return () => {
      const down = [...this.byName.values()].filter((u) => u.status !== 'up').map((u) => `${u.name}: ${u.status}`);
      return down.length === 0
        ? { name: 'mcp', status: 'ok' }
        : { name: 'mcp', status: 'degraded', detail: `MCP servers not up: ${down.join(', ')}` };
    };
  }

  private each<T>(fn: (u: Upstream) => T[]): T[] {
    return [...this.byName.values()].filter((u) => u.status === 'up').flatMap(fn);
  }
}

/** A name or URI that names no configured server. */
export class UnknownName extends Error {
  constructor(readonly q: string) {
    super(`'${q}' names no MCP server of this gateway`);
  }
}

export { UpstreamDown };
