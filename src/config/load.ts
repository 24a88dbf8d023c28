import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { ErrorObject } from 'ajv';
import type { config as ConfigValidators } from '../validation/generated/config';
import { heldWeakly, requireForNow, requirePackageForNow } from '../validation/load-once';
import type { Validator } from '../validation/validator';
import { interpolate, escapePointer } from './interpolate';
import type { GatewayConfig, PluginEntry } from './types';
import { providerTypeNames } from '../providers/registry';
import { strategyNames } from '../deployments/strategies';
import { embeddingsProblems, fallbackProblems } from './endpoints-check';

export interface ConfigProblem {
  pointer: string;
  message: string;
}

/** A config that cannot be used; `problems` lists every one found, each with its JSON pointer. */
export class ConfigError extends Error {
  constructor(
    readonly problems: ConfigProblem[],
    readonly source: string,
    /**
     * The plugin entries, when the file's plugin list could be read though other sections have problems: `gateway
     * check` checks them too, so that a typo elsewhere does not hide a plugin's problems.
     */
    readonly plugins?: PluginEntry[],
  ) {
    super(`Invalid configuration ${source}:\n${problems.map((p) => `  ${p.pointer || '/'}: ${p.message}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * The config's validator, generated at build time from ./schema.ts (scripts/gen-validators.js): starting compiles no
 * schema. Held weakly: a gateway reads its config once, and the validator (~200 KB of code and schema) would otherwise
 * stay in memory for the life of the process. Loads close together share one.
 */
const configValidator = heldWeakly(
  (): Validator => requireForNow<{ config: typeof ConfigValidators }>('../validation/generated/config').config.config,
);

/** The config file path: --config, else GATEWAY_CONFIG, else ./gateway.yaml. */
export function resolveConfigPath(argPath: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return resolve(argPath ?? (env.GATEWAY_CONFIG || 'gateway.yaml'));
}

export function loadConfigFile(path: string, env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError([{ pointer: '', message: `cannot read file: ${(e as Error).message}` }], path);
  }
  return parseConfig(text, { source: path, baseDir: dirname(path), env });
}

export interface ParseOptions {
  source?: string;
  baseDir?: string;
  env?: NodeJS.ProcessEnv;
}

/** Parse, interpolate, validate (with defaults), cross-check and freeze a YAML config. */
export function parseConfig(text: string, opts: ParseOptions = {}): GatewayConfig {
  const source = opts.source ?? '<inline>';
  const env = opts.env ?? process.env;
  // Loaded for the moment: a gateway parses its config once, and the parser (~0.8 MB of heap) would stay for good.
  const { parseDocument } = requirePackageForNow<typeof import('yaml')>('yaml');
  const doc = parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    // The YAML library's message carries line, column and an excerpt with a caret: keep all of it.
    throw new ConfigError(
      doc.errors.map((e) => ({ pointer: '', message: `YAML: ${e.message.trimEnd().replace(/\n/g, '\n    ')}` })),
      source,
    );
  }
  const problems: ConfigProblem[] = [];
  const raw = interpolate(doc.toJS() ?? {}, env, '', problems);
  return fromObject(raw, { ...opts, source, env }, problems);
}

/** Validate an already-parsed config object (tests build configs as objects). */
export function fromObject(raw: unknown, opts: ParseOptions = {}, problems: ConfigProblem[] = []): GatewayConfig {
  const source = opts.source ?? '<object>';
  const env = opts.env ?? process.env;
  const data = structuredClone(raw) as Record<string, unknown>;
  // A value left empty by an unset variable is reported once, as the variable, not again by the schema.
  const unset = new Set(problems.map((p) => p.pointer));
  const validate = configValidator();
  if (!validate(data)) problems.push(...formatAjvErrors(validate.errors ?? []).filter((p) => !unset.has(p.pointer)));
  if (problems.length > 0) throw new ConfigError(problems, source, readablePlugins(data.plugins, problems));
  const cfg = data as unknown as Omit<GatewayConfig, 'plugins' | 'baseDir'> & { plugins: unknown[] };
  if (env.PORT !== undefined && env.PORT !== '') {
    const port = Number(env.PORT);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      problems.push({ pointer: '/server/port', message: `PORT=${env.PORT} is not a port number` });
    else cfg.server.port = port;
  }
  if (env.GATEWAY_ADMIN_KEY) cfg.server.admin_key = env.GATEWAY_ADMIN_KEY;
  const config: GatewayConfig = {
    ...cfg,
    plugins: cfg.plugins.map(normalisePluginEntry),
    baseDir: opts.baseDir ?? process.cwd(),
  };
  if (config.store.driver === 'sqlite' && config.store.path !== ':memory:') {
    config.store.path = resolve(config.baseDir, config.store.path);
  }
  problems.push(...crossCheck(config));
  if (problems.length > 0) throw new ConfigError(problems, source);
  return deepFreeze(config);
}

/** The plugin entries when the schema found no problem under /plugins (they can be loaded and checked alone). */
function readablePlugins(list: unknown, problems: readonly ConfigProblem[]): PluginEntry[] | undefined {
  if (!Array.isArray(list) || problems.some((p) => p.pointer === '/plugins' || p.pointer.startsWith('/plugins/')))
    return undefined;
  return list.map(normalisePluginEntry);
}

function normalisePluginEntry(entry: unknown): PluginEntry {
  if (typeof entry === 'string') return { name: entry, config: {} };
  const obj = entry as Record<string, unknown>;
  if (typeof obj.use === 'string') {
    return {
      name: typeof obj.name === 'string' ? obj.name : obj.use,
      use: obj.use,
      config: (obj.config as Record<string, unknown>) ?? {},
    };
  }
  const [name, config] = Object.entries(obj)[0] as [string, Record<string, unknown> | null];
  return { name, config: config ?? {} };
}

/** Checks that JSON Schema cannot express: references between sections, unique names. */
function crossCheck(config: GatewayConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const providerNames = new Set<string>();
  const known = providerTypeNames();
  // A third-party plugin may register provider types and strategies: the plugin loader checks those names.
  const extensible = config.plugins.some((p) => p.use !== undefined);
  config.providers.forEach((p, i) => {
    if (providerNames.has(p.name))
      problems.push({ pointer: `/providers/${i}/name`, message: `duplicate provider name '${p.name}'` });
    providerNames.add(p.name);
    if (!extensible && !known.includes(p.type))
      problems.push({
        pointer: `/providers/${i}/type`,
        message: `unknown provider type '${p.type}'; known types: ${known.join(', ')}`,
      });
    // Azure has no default address: each resource has its own.
    if (p.type === 'azure' && !p.api_base)
      problems.push({
        pointer: `/providers/${i}/api_base`,
        message: 'an azure provider needs its resource endpoint as api_base (https://<resource>.openai.azure.com)',
      });
  });
  const modelIds = new Set<string>();
  config.models.forEach((m, i) => {
    if (modelIds.has(m.id)) problems.push({ pointer: `/models/${i}/id`, message: `duplicate model id '${m.id}'` });
    modelIds.add(m.id);
    const strategy = m.routing?.strategy;
    if (!extensible && strategy !== undefined && !strategyNames().includes(strategy)) {
      problems.push({
        pointer: `/models/${i}/routing/strategy`,
        message: `unknown strategy '${strategy}'; known strategies: ${strategyNames().join(', ')}`,
      });
    }
    problems.push(...fallbackProblems(m, config.models, `/models/${i}/routing/fallbacks`));
    m.deployments.forEach((d, j) => {
      if (!providerNames.has(d.provider))
        problems.push({
          pointer: `/models/${i}/deployments/${j}/provider`,
          message: `no provider named '${d.provider}'`,
        });
      problems.push(...embeddingsProblems(m, d.provider, config.providers, `/models/${i}/deployments/${j}/provider`));
    });
  });
  problems.push(...presetProblems(config, modelIds, providerNames));
  const pluginNames = new Set<string>();
  config.plugins.forEach((p, i) => {
    if (pluginNames.has(p.name))
      problems.push({ pointer: `/plugins/${i}`, message: `plugin '${p.name}' is listed twice` });
    pluginNames.add(p.name);
  });
  return problems;
}

/** Presets: unique names, and the models and providers they name exist (a variant suffix is checked per request). */
function presetProblems(config: GatewayConfig, modelIds: Set<string>, providers: Set<string>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const seen = new Set<string>();
  const known = (id: string) => modelIds.has(id) || modelIds.has(id.replace(/:[a-z]+$/, ''));
  config.presets.forEach((p, i) => {
    if (seen.has(p.name)) problems.push({ pointer: `/presets/${i}/name`, message: `duplicate preset '${p.name}'` });
    seen.add(p.name);
    for (const [j, id] of [p.model, ...(p.models ?? [])].entries())
      if (id !== undefined && !known(id))
        problems.push({
          pointer: `/presets/${i}/${j === 0 ? 'model' : `models/${j - 1}`}`,
          message: `no model '${id}'`,
        });
    for (const field of ['order', 'only', 'ignore'] as const)
      for (const name of p.provider?.[field] ?? [])
        if (!providers.has(name))
          problems.push({ pointer: `/presets/${i}/provider/${field}`, message: `no provider named '${name}'` });
  });
  return problems;
}

export function formatAjvErrors(errs: ErrorObject[], prefix = ''): ConfigProblem[] {
  const seen = new Set<string>();
  const out: ConfigProblem[] = [];
  for (const e of errs) {
    // oneOf/if failures repeat what their branches already said.
    if (e.keyword === 'oneOf' || e.keyword === 'if' || e.keyword === 'anyOf') continue;
    let pointer = prefix + e.instancePath;
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'additionalProperties') {
      const key = String((e.params as { additionalProperty: string }).additionalProperty);
      pointer = `${pointer}/${escapePointer(key)}`;
      const known = Object.keys((e.parentSchema as { properties?: object } | undefined)?.properties ?? {});
      message = `unknown key${suggest(key, known)}`;
    } else if (e.keyword === 'enum') {
      message = `must be one of: ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
    }
    const line = `${pointer}|${message}`;
    if (seen.has(line)) continue;
    seen.add(line);
    out.push({ pointer, message });
  }
  return out;
}

/** "; did you mean 'x'?" when a known key is near the mistyped one (edit distance), else nothing. */
export function suggest(key: string, known: readonly string[]): string {
  if (known.length === 0) return '';
  const near = known
    .map((k) => ({ k, d: editDistance(key.toLowerCase(), k.toLowerCase()) }))
    .sort((a, b) => a.d - b.d)[0];
  return near.d <= Math.max(2, Math.floor(key.length / 3)) ? `; did you mean '${near.k}'?` : '';
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length];
}

export function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object' && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o as Record<string, unknown>)) deepFreeze(v);
  }
  return o;
}
