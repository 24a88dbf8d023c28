import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { GatewayConfig } from '../config/types';
import type { ConfigProblem } from '../config/load';
import type { ModelRegistry } from '../models/registry';
import type { Store } from '../store/index';
import type { Transport } from '../transport/http';
import type { AttemptPlan, GatewayState, Principal } from './state';
import type { ProviderAdapter } from '../providers/types';
import type { RoutingStrategy } from '../deployments/strategies';
import type { SharedState } from './shared-state';
import type { SharedServices } from './shared-services';
import type { AttemptGuards } from './attempt-guards';
import type { CliCommand } from '../cli/command';
import type { StoreExtension } from '../store/extensions';

/**
 * Capability names plugins require and provide. The built-in ones narrow the state's type
 * for a plugin that requires them: `principal` (auth), `plan` (fallback), `credit`.
 */
export type Capability = 'principal' | 'plan' | 'credit' | (string & {});

/** The state as a plugin that requires R sees it: what an earlier plugin provides is no longer optional. */
export type StateFor<R extends readonly Capability[]> = string extends R[number]
  ? GatewayState
  : GatewayState &
      ('principal' extends R[number] ? { principal: Principal } : unknown) &
      ('plan' extends R[number] ? { plan: AttemptPlan } : unknown);

/** The Koa context every chat plugin sees (narrowed by what the plugin requires). */
export type GatewayContext<R extends readonly Capability[] = readonly []> = ParameterizedContext<{
  gateway: StateFor<R>;
  requestId: string;
}>;
export type Next = () => Promise<void>;
export type GatewayMiddleware<R extends readonly Capability[] = readonly []> = (
  ctx: GatewayContext<R>,
  next: Next,
) => Promise<void>;

/** Extension point: add a provider type (usable as `providers[].type`), declared in the plugin's `providerTypes`. */
export interface ProviderExtension {
  register(adapter: ProviderAdapter): void;
}

/** Extension point: add a routing strategy (usable as `models[].routing.strategy`), declared in `strategies`. */
export interface StrategyExtension {
  register(name: string, strategy: RoutingStrategy): void;
}

/** What the core hands every plugin at setup. */
export interface PluginServices {
  config: GatewayConfig;
  store: Store;
  logger: Logger;
  models: ModelRegistry;
  transport: Transport;
  /** The one Prometheus registry; any plugin may add its metrics. */
  metrics: Registry;
  /** Router for the gateway's non-chat endpoints; plugins may add theirs. */
  router: Router;
  /** Values shared between plugins (e.g. the auth plugin's authenticate function), keyed by name. */
  shared: SharedServices;
  /** Register provider adapter types this plugin declares in `providerTypes`. */
  providers: ProviderExtension;
  /** Register routing strategies this plugin declares in `strategies`. */
  strategies: StrategyExtension;
  /** Counters and values that hold across replicas (the store, or Redis when `shared_state.driver` is redis). */
  state: SharedState;
  /**
   * Extension point: `register(guard)` adds a check that the plan executor runs before every upstream attempt of
   * every request (first, retry, fallback, context-window fallback; any endpoint). `admit` is the executor's.
   */
  attemptGuards: AttemptGuards;
}

export interface PluginInstance<R extends readonly Capability[] = readonly Capability[]> {
  /**
   * Onion middleware on the chat chain; calls next() at most once and awaits it (the core
   * refuses anything else with a named error). Leave it out for a plugin that only adds
   * routes, provider types or strategies: it then costs nothing per request.
   */
  middleware?(ctx: GatewayContext<R>, next: Next): Promise<void>;
  close?(): Promise<void> | void;
  /**
   * Problems of the plugin's YAML section that show only once every plugin is set up (a name another plugin
   * registers later in the chain), each with its JSON pointer inside the section (`/policies/strict/checks/0`).
   * `start` and `check` refuse the config with them, beside every other problem.
   */
  configProblems?(): ConfigProblem[];
}

/**
 * A plugin: a name, a JSON Schema for its YAML section (validated with defaults and
 * frozen before setup), what it needs earlier in the chain and what it provides to
 * later ones, and a setup that does the expensive work once.
 */
export interface Plugin<C = Record<string, unknown>, R extends readonly Capability[] = readonly Capability[]> {
  name: string;
  description?: string;
  /** JSON Schema of the plugin's YAML section: ajv strict mode, defaults applied, then frozen. */
  configSchema: Record<string, unknown>;
  /** Capabilities that a plugin earlier in the chain must provide (e.g. 'principal'). */
  requires?: R;
  /** Capabilities this plugin provides to plugins after it. */
  provides?: readonly Capability[];
  /** Plugins that, when they are in the chain, must come before this one ("if present, earlier"). */
  after?: readonly string[];
  /** True for the one plugin that ends the chain (it produces the result). */
  terminal?: boolean;
  /** Provider types this plugin registers in setup, so the config may name them. */
  providerTypes?: readonly string[];
  /** Routing strategies this plugin registers in setup, so the config may name them. */
  strategies?: readonly string[];
  /**
   * Commands this plugin adds to the `gateway` CLI while it is in the configured chain: whole commands, or
   * sub-commands of another (`parent`), e.g. the limits plugin's `gateway keys limits HASH`. Read without setup.
   */
  cli?: { commands: readonly CliCommand[] };
  /**
   * What this plugin keeps in the store: its own migrations, and its procedures as a module path (they run in
   * SQLite's worker thread, which loads them). The store opens with the chain's extensions; read without setup.
   */
  store?: StoreExtension;
  setup(config: Readonly<C>, services: PluginServices): PluginInstance<R> | Promise<PluginInstance<R>>;
}

/**
 * Identity with types: `export default definePlugin({...})`. Written without type
 * arguments, `requires: ['principal']` narrows `ctx.state.gateway.principal` to present;
 * `definePlugin<Config, ['principal']>` says the same with an explicit config type.
 */
export function definePlugin<
  C = Record<string, unknown>,
  const R extends readonly Capability[] = readonly Capability[],
>(plugin: Plugin<C, R>): Plugin<C, R> {
  return plugin;
}
