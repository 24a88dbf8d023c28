import { hostname, userInfo } from 'node:os';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { loadConfigFile, resolveConfigPath } from '../config/load';
import { openStore, type Store } from '../store/index';
import { storeExtensionsOf } from '../store/extensions';
import { loadPlugins } from '../pipeline/loader';
import type { GatewayConfig } from '../config/types';

/**
 * Parse a sub-command's flags (always with --config and --json) and open the configured store; `fn` gets the loaded
 * config too (a plugin's command reads its own stanza: the cache plugin's Redis backend).
 */
export async function withStore<T extends NonNullable<ParseArgsConfig['options']>>(
  args: string[],
  options: T,
  fn: (
    store: Store,
    values: Record<string, string | boolean | undefined>,
    positionals: string[],
    config: GatewayConfig,
  ) => Promise<number>,
): Promise<number> {
  const parsed = parseArgs({
    args,
    options: { ...options, config: { type: 'string', short: 'c' }, json: { type: 'boolean' } },
    allowPositionals: true,
    strict: true,
  });
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const positionals = parsed.positionals;
  const config = loadConfigFile(resolveConfigPath(values.config as string | undefined));
  // With the configured chain's store extensions, as the gateway opens it: its plugins' tables and procedures.
  const store = await openStore(config.store, {}, storeExtensionsOf(loadPlugins(config.plugins, config.baseDir)));
  try {
    return await fn(store, values, positionals, config);
  } finally {
    await store.close();
  }
}

/** A table for people, or JSON for scripts (--json). */
export function print(rows: Array<Record<string, unknown>>, json: boolean): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(rows.length === 1 ? rows[0] : rows, null, 2)}\n`);
    return;
  }
  if (rows.length === 0) {
    process.stdout.write('(none)\n');
    return;
  }
  const cols = Object.keys(rows[0]);
  const cells = rows.map((r) => cols.map((c) => cell(r[c])));
  const width = cols.map((c, i) => Math.max(c.length, ...cells.map((r) => r[i].length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(width[i]))
      .join('  ')
      .trimEnd();
  process.stdout.write(`${[line(cols), ...cells.map(line)].join('\n')}\n`);
}

/**
 * One table cell for people: a nested object as `key=value` pairs (`rpm=60 tpm=0`), a list comma-separated, an empty
 * list `(none)`, null or undefined as `-`.
 */
export function cell(v: unknown): string {
  if (v === null || v === undefined) return '-';
  if (Array.isArray(v)) return v.length === 0 ? '(none)' : v.map(cell).join(',');
  if (typeof v === 'object')
    return (
      Object.entries(v as Record<string, unknown>)
        .map(([k, x]) => `${k}=${cell(x)}`)
        .join(' ') || '-'
    );
  return String(v);
}

export function fail(message: string): number {
  process.stderr.write(`gateway: ${message}\n`);
  return 2;
}

/**
 * Append a change made by `gateway accounts ...` / `gateway keys ...` (or a plugin's command) to the audit log: actor
 * the CLI and who ran it (cliActor), role admin (whoever can open the store can do anything), source `cli`, no
 * address. Never a raw key (redactAudit cuts one anyway).
 */
export function auditCli(
  store: Store,
  change: { action: string; target: string; before?: unknown; after?: unknown },
): Promise<string> {
  return store.audit.append({ actor: cliActor(), role: 'admin', source: 'cli', ...change });
}

/**
 * Who ran the CLI, as far as the process knows: `cli:<user>@<host>` (the host tells machines sharing one PostgreSQL
 * store apart), `cli:root@host (sudo from alice)` under sudo, plain `cli` when the system names no user. The user is
 * the process's, not a claim: no flag or variable of the gateway's sets it.
 */
export function cliActor(env: NodeJS.ProcessEnv = process.env): string {
  let user: string | undefined;
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry for the uid (a container's arbitrary uid): what the login shell said, if anything.
    user = env.USER ?? env.LOGNAME;
  }
  if (!user) return 'cli';
  const sudo = env.SUDO_USER && env.SUDO_USER !== user ? ` (sudo from ${env.SUDO_USER})` : '';
  return `cli:${user}@${hostname()}${sudo}`;
}
