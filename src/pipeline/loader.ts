import { existsSync, readdirSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import type Ajv from 'ajv';
import type { PluginEntry } from '../config/types';
import { ConfigError, deepFreeze, formatAjvErrors, type ConfigProblem } from '../config/load';
import type { GatewayConfig } from '../config/types';
import { providerTypeNames, registerAdapter } from '../providers/registry';
import { registerStrategy, strategyNames } from '../deployments/strategies';
import type { Plugin, PluginInstance, PluginServices } from './plugin';
import { scopedState, type StateBackend } from './shared-state';
import type { pluginConfigs as PluginConfigs } from '../validation/generated/plugin-configs';
import { heldWeakly, requireForNow } from '../validation/load-once';
import { aliasPublicModules } from './public-modules';
import { storeExtensionProblems } from '../store/extensions';
import type { Validator } from '../validation/validator';

const BUILTIN_DIR = resolve(__dirname, '../../plugins');

/**
 * The Ajv that compiles the config schemas of plugins that are not built in (the built-in plugins' validators are
 * generated at build time: src/validation/generated/plugin-configs.ts, same options). Loaded only for such a plugin;
 * it caches each plugin's validator (by schema object). Held weakly: configs are checked at startup, and the
 * validators (generated code, tens of KB per plugin) need not stay in memory after. Loads close together share one.
 * Strict: a misspelt keyword in a plugin's configSchema is an error naming the plugin, not a silently ignored rule.
 */
const pluginAjv = heldWeakly((): Ajv => {
  const { default: AjvClass } = require('ajv') as typeof import('ajv');
  return new AjvClass({ allErrors: true, useDefaults: true, strict: true, strictRequired: false, verbose: true });
});

/** The built-in plugins' validators, generated at build time; held weakly as the Ajv above (a chain loads once). */
const builtinValidators = heldWeakly(
  () => requireForNow<{ pluginConfigs: typeof PluginConfigs }>('../validation/generated/plugin-configs').pluginConfigs,
);

/** A built-in plugin's generated validator; else one compiled now from the plugin's configSchema. */
function configValidator(entry: PluginEntry, plugin: Plugin<Record<string, unknown>>): Validator {
  if (entry.use !== undefined) return pluginAjv().compile(plugin.configSchema);
  return builtinValidators()[entry.name as keyof typeof PluginConfigs] ?? pluginAjv().compile(plugin.configSchema);
}

export interface LoadedPlugin {
  plugin: Plugin<Record<string, unknown>>;
  config: Readonly<Record<string, unknown>>;
  entry: PluginEntry;
  index: number;
}

/** Names of the built-in plugins (folders of plugins/ with an index). */
export function builtinPluginNames(): string[] {
  return readdirSync(BUILTIN_DIR, { withFileTypes: true })
    .filter(
      (d) =>
        d.isDirectory() &&
        (existsSync(join(BUILTIN_DIR, d.name, 'index.ts')) || existsSync(join(BUILTIN_DIR, d.name, 'index.js'))),
    )
    .map((d) => d.name)
    .sort();
}

function resolveModule(entry: PluginEntry, baseDir: string): string {
  if (entry.use === undefined) {
    if (!/^[a-z0-9-]+$/.test(entry.name) || !builtinPluginNames().includes(entry.name)) {
      throw new Error(
        `unknown plugin '${entry.name}'; built-in plugins: ${builtinPluginNames().join(', ')}; ` +
          'load others with {use: ./path-or-package}',
      );
    }
    return join(BUILTIN_DIR, entry.name);
  }
  const spec = entry.use;
  if (spec.startsWith('.') || isAbsolute(spec)) return resolve(baseDir, spec);
  return require.resolve(spec, { paths: [baseDir, process.cwd()] });
}

function isPlugin(v: unknown): v is Plugin<Record<string, unknown>> {
  const p = v as Partial<Plugin>;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof p.name === 'string' &&
    typeof p.setup === 'function' &&
    typeof p.configSchema === 'object'
  );
}

/**
 * Resolve, validate and order-check the chain. Every problem is collected and thrown
 * as one ConfigError, each with its JSON pointer (/plugins/<i>/...).
 */
export function loadPlugins(entries: readonly PluginEntry[], baseDir: string): LoadedPlugin[] {
  aliasPublicModules();
  const problems: ConfigProblem[] = [];
  const loaded: LoadedPlugin[] = [];
  // Plugins found but misconfigured still count for the order check (no false "requires" error).
  const found: LoadedPlugin[] = [];
  entries.forEach((entry, index) => {
    const pointer = `/plugins/${index}`;
    let mod: unknown;
    try {
      mod = require(resolveModule(entry, baseDir));
    } catch (e) {
      problems.push({ pointer, message: (e as Error).message.split('\n')[0] });
      return;
    }
    const plugin = (mod as { default?: unknown }).default ?? mod;
    if (!isPlugin(plugin)) {
      problems.push({ pointer, message: `'${entry.name}' does not export a plugin ({name, configSchema, setup})` });
      return;
    }
    const config = structuredClone(entry.config);
    let validate: Validator;
    try {
      validate = configValidator(entry, plugin);
    } catch (e) {
      problems.push({
        pointer,
        message: `plugin '${plugin.name}': its configSchema is not valid JSON Schema: ${(e as Error).message}`,
      });
      found.push({ plugin, config, entry, index });
      return;
    }
    if (!validate(config)) {
      problems.push(
        ...formatAjvErrors(validate.errors ?? [], `${pointer}/${entry.use ? 'config' : escapeKey(entry.name)}`).map(
          (p) => ({ ...p, message: `plugin '${plugin.name}': ${p.message}` }),
        ),
      );
      found.push({ plugin, config, entry, index });
      return;
    }
    loaded.push({ plugin, config: deepFreeze(config), entry, index });
    found.push(loaded[loaded.length - 1]);
  });
  problems.push(...checkOrder(found), ...storeExtensionProblems(found));
  if (problems.length > 0) throw new ConfigError(problems, 'plugins');
  return loaded;
}

function escapeKey(k: string): string {
  return k.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * Each `requires` must be provided by an earlier plugin; each plugin named in an `after` comes earlier when it is in
 * the chain at all; the terminal plugin must come last.
 */
export function checkOrder(chain: readonly LoadedPlugin[]): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const providers = new Map<string, LoadedPlugin>();
  for (const p of chain) for (const cap of p.plugin.provides ?? []) if (!providers.has(cap)) providers.set(cap, p);
  const seen = new Set<string>();
  chain.forEach((p, i) => {
    for (const cap of p.plugin.requires ?? []) {
      if (seen.has(cap)) continue;
      const by = providers.get(cap);
      problems.push({
        pointer: `/plugins/${p.index}`,
        message: by
          ? `plugin '${p.plugin.name}' requires '${cap}', which plugin '${by.plugin.name}' provides, ` +
            `but '${by.plugin.name}' comes after '${p.plugin.name}'; move '${by.plugin.name}' before it`
          : `plugin '${p.plugin.name}' requires '${cap}', which no plugin in the chain provides`,
      });
    }
    for (const cap of p.plugin.provides ?? []) seen.add(cap);
    for (const name of p.plugin.after ?? []) {
      const later = chain.findIndex((q, j) => j > i && q.plugin.name === name);
      if (later >= 0)
        problems.push({
          pointer: `/plugins/${chain[later].index}`,
          message: `plugin '${name}' must come before '${p.plugin.name}' (it is listed after it); move '${name}' up`,
        });
    }
    if (p.plugin.terminal && i !== chain.length - 1) {
      problems.push({
        pointer: `/plugins/${p.index}`,
        message:
          `plugin '${p.plugin.name}' ends the chain and must be listed last; ` +
          `'${chain[i + 1].plugin.name}' comes after it`,
      });
    }
  });
  const last = chain[chain.length - 1];
  if (chain.length > 0 && !last.plugin.terminal) {
    problems.push({
      pointer: '/plugins',
      message: `the chain must end with a terminal plugin (e.g. 'routing'); it ends with '${last.plugin.name}'`,
    });
  }
  return problems;
}

/**
 * Set each plugin up with services of its own: its extension points accept only the
 * provider types and strategies it declares, and its shared state is its own key space.
 * After setup, every provider type and strategy the config names must exist.
 */
export async function setupPlugins(
  chain: readonly LoadedPlugin[],
  services: PluginServices,
  state: StateBackend,
): Promise<Array<{ name: string; instance: PluginInstance }>> {
  const out: Array<{ name: string; instance: PluginInstance }> = [];
  for (const p of chain) {
    const own: PluginServices = { ...services, ...extensionsFor(p.plugin), state: scopedState(state, p.plugin.name) };
    out.push({ name: p.plugin.name, instance: await p.plugin.setup(p.config, own) });
  }
  const problems = [...checkExtensions(services.config), ...setUpProblems(chain, out)];
  if (problems.length > 0) throw new ConfigError(problems, 'plugins');
  return out;
}

/** Each plugin's own late problems (PluginInstance.configProblems), with pointers into the whole config. */
function setUpProblems(
  chain: readonly LoadedPlugin[],
  instances: ReadonlyArray<{ instance: PluginInstance }>,
): ConfigProblem[] {
  return chain.flatMap((p, i) => {
    const section = `/plugins/${p.index}/${p.entry.use ? 'config' : escapeKey(p.entry.name)}`;
    return (instances[i].instance.configProblems?.() ?? []).map((q) => ({
      pointer: section + q.pointer,
      message: `plugin '${p.plugin.name}': ${q.message}`,
    }));
  });
}

function extensionsFor(plugin: Plugin<Record<string, unknown>>): Pick<PluginServices, 'providers' | 'strategies'> {
  const undeclared = (what: string, name: string, list: string) =>
    new Error(`plugin '${plugin.name}' registers ${what} '${name}' without declaring it in its '${list}'`);
  return {
    providers: {
      register(adapter) {
        if (!(plugin.providerTypes ?? []).includes(adapter.type))
          throw undeclared('provider type', adapter.type, 'providerTypes');
        registerAdapter(adapter);
      },
    },
    strategies: {
      register(name, strategy) {
        if (!(plugin.strategies ?? []).includes(name)) throw undeclared('strategy', name, 'strategies');
        registerStrategy(name, strategy);
      },
    },
  };
}

/** Provider types and strategies the config names, against what is registered once plugins are set up. */
function checkExtensions(config: GatewayConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const types = providerTypeNames();
  const strategies = strategyNames();
  config.providers.forEach((p, i) => {
    if (!types.includes(p.type)) {
      problems.push({
        pointer: `/providers/${i}/type`,
        message: `unknown provider type '${p.type}'; known types: ${types.join(', ')}`,
      });
    }
  });
  config.models.forEach((m, i) => {
    const s = m.routing?.strategy;
    if (s !== undefined && !strategies.includes(s)) {
      problems.push({
        pointer: `/models/${i}/routing/strategy`,
        message: `unknown strategy '${s}'; known strategies: ${strategies.join(', ')}`,
      });
    }
  });
  return problems;
}

/** Extension points outside any plugin's setup (the core's own services object): unscoped. */
export function coreExtensions(): Pick<PluginServices, 'providers' | 'strategies'> {
  return {
    providers: { register: registerAdapter },
    strategies: { register: registerStrategy },
  };
}
