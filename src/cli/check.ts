/**
 * @module
 * The checks `gateway start` runs before it listens, shared with `gateway check` so that the two never disagree:
 * the file (YAML, schema, cross-references), the plugin chain (each plugin's section, the order, the store
 * extensions) even when another section has a typo, the worker count, and (check only, since start does it for
 * real) every plugin's setup against a throwaway in-memory store.
 */
import { ConfigError, loadConfigFile, type ConfigProblem } from '../config/load';
import type { GatewayConfig, PluginEntry } from '../config/types';
import { loadPlugins } from '../pipeline/loader';
import { workersProblem } from '../workers';

export interface Checked {
  /** The config, when the file itself is valid (plugin problems may remain). */
  config: GatewayConfig | undefined;
  problems: ConfigProblem[];
}

/** The static checks, every problem of the file and its chain. `workers`: --workers, else server.workers. */
export function checkConfig(path: string, workers: number | undefined): Checked {
  const problems: ConfigProblem[] = [];
  let config: GatewayConfig | undefined;
  try {
    config = loadConfigFile(path);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    problems.push(...e.problems);
    if (e.plugins) problems.push(...chainProblems(e.plugins, dirOf(path)));
    return { config: undefined, problems };
  }
  problems.push(...chainProblems(config.plugins, config.baseDir));
  const problem = workersProblem(config, workers ?? config.server.workers);
  if (problem) problems.push({ pointer: '/server/workers', message: problem });
  return { config, problems };
}

function chainProblems(entries: readonly PluginEntry[], baseDir: string): ConfigProblem[] {
  try {
    loadPlugins(entries, baseDir);
    return [];
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    return [{ pointer: '/plugins', message: (e as Error).message }];
  }
}

function dirOf(path: string): string {
  return path.slice(0, Math.max(0, path.lastIndexOf('/'))) || '.';
}

/**
 * What start does next, dry: every plugin set up, in order, on an in-memory store that is then thrown away (a weak
 * admin key, an unknown provider type from a third-party plugin, a plugin's own refusal). Nothing is listened on,
 * stored or printed: a first start's keys wait for the listen (addListeningHook), which never comes here.
 */
export async function checkSetup(config: GatewayConfig): Promise<ConfigProblem[]> {
  // Loaded here, for check only: start loads them itself.
  const { createApp } = require('../app') as typeof import('../app');
  const { openStore } = require('../store/index') as typeof import('../store/index');
  const { storeExtensionsOf } = require('../store/extensions') as typeof import('../store/extensions');
  const { createLogger } = require('../logger') as typeof import('../logger');
  const store = await openStore(
    { driver: 'memory' },
    {},
    storeExtensionsOf(loadPlugins(config.plugins, config.baseDir)),
  );
  try {
    const gw = await createApp(config, { store, logger: createLogger('silent') });
    await gw.close();
    return [];
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    return [{ pointer: '/plugins', message: (e as Error).message.split('\n')[0] }];
  } finally {
    await store.close();
  }
}

/** Every problem, one a line, under the file's name (what start and check print). */
export function problemsText(path: string, problems: readonly ConfigProblem[]): string {
  return new ConfigError([...problems], path).message;
}
