/**
 * @module
 * Who may call what, how often, at what price: the allowlists of keys and accounts (the YAML's `access`, replaced per
 * key or account by the admin API's), the per-key rate limit on tool calls (shared by replicas through
 * services.state) and the price of a call (`tool_prices` by glob, else the server's `price_per_call`).
 */
import { errors, hasRole, toNano, type GatewayError, type Principal, type SharedState } from '../../src/plugin';
import { globRe, matcher } from './names';
import type { McpConfig, ServerConfig } from './schema';
import type { AccessRepo, Subject } from './store/repo';

/** How long an allowlist read from the store is trusted on this replica (another replica's change waits this long). */
export const ACCESS_CACHE_MS = 2000;

export type Allows = (qualifiedName: string) => boolean;

export class Access {
  private readonly cache = new Map<string, { until: number; patterns: string[] | null }>();

  constructor(
    private readonly repo: AccessRepo,
    private readonly yaml: McpConfig['access'],
  ) {}

  /** What `p` may use: its account's list (the store's, else the YAML's, else `default`) and its key's, if any. */
  async allows(p: Principal): Promise<Allows> {
    // The admin key and staff roles use every tool (as they see every model).
    if (p.isAdmin || hasRole(p, 'operator')) return () => true;
    const [account, key] = await Promise.all([this.read('account', p.accountId), this.read('key', p.keyHash)]);
    const a = matcher(account ?? this.yaml.accounts[p.accountId] ?? this.yaml.default);
    const k = key ?? this.yaml.keys[p.keyHash];
    const kk = k ? matcher(k) : null;
    return (name) => a(name) && (kk === null || kk(name));
  }

  /** The list the admin API set for a key or an account (null: none, the YAML decides). */
  get(subject: Subject, id: string): Promise<string[] | null> {
    return this.repo.get(subject, id);
  }

  async set(subject: Subject, id: string, patterns: string[] | null): Promise<void> {
    await this.repo.set(subject, id, patterns);
    this.cache.delete(`${subject}:${id}`);
  }

  private async read(subject: Subject, id: string): Promise<string[] | null> {
    const k = `${subject}:${id}`;
    const hit = this.cache.get(k);
    const now = Date.now();
    if (hit && hit.until > now) return hit.patterns;
    const patterns = await this.repo.get(subject, id);
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(k, { until: now + ACCESS_CACHE_MS, patterns });
    return patterns;
  }
}

/** The per-key limit on tool calls in a minute; a 429 with Retry-After past it. */
export function callLimiter(state: SharedState, perMinute: number) {
  return async (p: Principal): Promise<GatewayError | null> => {
    if (perMinute === 0 || p.isAdmin) return null;
    const c = await state.increment(`calls:${p.keyHash}`, 1, 60_000);
    if (c.value <= perMinute) return null;
    return errors.rateLimited(
      'rate_limit_exceeded',
      `This key may make ${perMinute} MCP tool calls a minute`,
      Math.max(1, (c.resetAt - Date.now()) / 1000),
    );
  };
}

/** The price of a tool of a server in nano-credits: the first `tool_prices` glob that matches, else the server's. */
export function pricer(servers: readonly ServerConfig[]): (server: string, tool: string) => number {
  const table = new Map(
    servers.map((s) => [
      s.name,
      {
        each: toNano(s.price_per_call),
        tools: Object.entries(s.tool_prices).map(([g, c]) => [globRe(g), toNano(c)] as const),
      },
    ]),
  );
  return (server, tool) => {
    const t = table.get(server);
    if (!t) return 0;
    return t.tools.find(([re]) => re.test(tool))?.[1] ?? t.each;
  };
}
