import { isAbsolute } from 'node:path';
import type { ConfigProblem } from '../config/load';
import { migrations as coreMigrations, type Migration } from './migrations/index';
import { coreProcedures, proceduresIn } from './procedures';

/**
 * What a plugin keeps in the store (`store` in its definition, read without setup): its own migrations and its
 * procedures. The gateway opens the store with the extensions of the configured chain's plugins: their migrations
 * run with the core's (one transaction; on PostgreSQL under the same advisory lock), their procedures are
 * registered where procedures run (SQLite's worker thread, or the main thread).
 */
export interface StoreExtension {
  /**
   * The plugin's migrations, under module names of its own (no other plugin's, not the core's). A module's versions
   * run in order, once; applied ones are recorded in `schema_migrations` by module and version, so neither may change
   * once released.
   */
  migrations?: readonly Migration[];
  /**
   * The absolute path of a module whose exports include the plugin's procedures (`Proc`s; an exported array of them
   * counts too): `require.resolve('./store/procedures')`. A path, not the procedures, because on SQLite they run in
   * the store's worker thread, which loads the module itself (before it replays its redo log: a logged call names its
   * procedure). The module should import only `model-gateway/plugin/procedures`, the light door a worker loads.
   */
  procedures?: string;
}

/** The store extensions of a chain: what openStore runs and registers. */
export interface StoreExtensions {
  migrations: readonly Migration[];
  /** Module paths of procedures, each once. */
  procedures: readonly string[];
}

export const NO_EXTENSIONS: StoreExtensions = { migrations: [], procedures: [] };

/** A plugin of a chain as the loader has it (LoadedPlugin). */
interface ChainPlugin {
  plugin: { name: string; store?: StoreExtension };
  index: number;
}

/** The extensions of a chain's plugins, in chain order (a plugin listed twice counts once). */
export function storeExtensionsOf(chain: readonly ChainPlugin[]): StoreExtensions {
  const migrations = new Map<string, Migration>();
  const procedures = new Set<string>();
  for (const { plugin } of chain) {
    for (const m of plugin.store?.migrations ?? []) migrations.set(`${m.module}@${m.version}`, m);
    if (plugin.store?.procedures !== undefined) procedures.add(plugin.store.procedures);
  }
  return { migrations: [...migrations.values()], procedures: [...procedures] };
}

function isMigration(m: unknown): m is Migration {
  const x = m as Partial<Migration> | null;
  const sql = (v: unknown) =>
    typeof v === 'string' ||
    (typeof v === 'object' && v !== null && typeof (v as { sqlite?: unknown }).sqlite === 'string');
  return (
    typeof m === 'object' &&
    x !== null &&
    typeof x.module === 'string' &&
    x.module !== '' &&
    Number.isInteger(x.version) &&
    typeof x.description === 'string' &&
    sql(x.up)
  );
}

/**
 * Problems with the chain's store extensions, found when the plugins load (before anything opens the store): an
 * extension that is not one, a migration module or a procedure name that two plugins (or a plugin and the core)
 * claim, each naming both, and a procedures module that does not load.
 */
export function storeExtensionProblems(chain: readonly ChainPlugin[]): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const modules = new Map<string, string>(coreMigrations.map((m) => [m.module, 'the core']));
  const names = new Map<string, string>([...coreProcedures.keys()].map((n) => [n, 'the core']));
  const claim = (claims: Map<string, string>, key: string, who: string, what: string, p: ChainPlugin) => {
    const by = claims.get(key);
    if (by === undefined || by === who) return void claims.set(key, who);
    problems.push({
      pointer: `/plugins/${p.index}`,
      message: `${who} claims the store ${what} '${key}', as ${by} does`,
    });
  };
  for (const p of chain) {
    const ext = p.plugin.store;
    if (ext === undefined) continue;
    const who = `plugin '${p.plugin.name}'`;
    const wrong = (message: string) => problems.push({ pointer: `/plugins/${p.index}`, message: `${who}: ${message}` });
    const list: unknown = ext.migrations ?? [];
    if (!Array.isArray(list) || !list.every(isMigration))
      wrong('store.migrations must be a list of { module, version, description, up }');
    else for (const module of new Set(list.map((m) => m.module))) claim(modules, module, who, 'migration module', p);
    if (ext.procedures === undefined) continue;
    if (typeof ext.procedures !== 'string' || !isAbsolute(ext.procedures)) {
      wrong("store.procedures must be a module's absolute path (require.resolve('./store/procedures'))");
      continue;
    }
    let procs: Array<{ name: string }>;
    try {
      procs = proceduresIn(ext.procedures);
    } catch (e) {
      wrong(`its store procedures (${ext.procedures}) do not load: ${(e as Error).message.split('\n')[0]}`);
      continue;
    }
    for (const proc of procs) claim(names, proc.name, who, 'procedure', p);
  }
  return problems;
}

/**
 * What a store opened by someone else (a test's, shared between gateways) lacks of a chain's extensions, as a
 * sentence, or null: the store must have been opened with them.
 */
export function missingExtensions(have: StoreExtensions, want: StoreExtensions): string | null {
  const modules = new Set(have.migrations.map((m) => `${m.module}@${m.version}`));
  const missing = [
    ...want.migrations
      .filter((m) => !modules.has(`${m.module}@${m.version}`))
      .map((m) => `migration ${m.module}@${m.version}`),
    ...want.procedures.filter((p) => !have.procedures.includes(p)).map((p) => `procedures ${p}`),
  ];
  return missing.length === 0
    ? null
    : `the store was opened without the chain's store extensions: ${missing.join(', ')}`;
}
