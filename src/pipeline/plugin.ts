import type Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { GatewayConfig } from '../config/types';
import type { ModelRegistry } from '../models/registry';
import type { Store } from '../store/index';
import type { Transport } from '../transport/http';
import type { GatewayState } from './state';

/** The Koa context every chat plugin sees. */
export type GatewayContext = ParameterizedContext<{ gateway: GatewayState; requestId: string }>;
export type Next = () => Promise<void>;
export type GatewayMiddleware = (ctx: GatewayContext, next: Next) => Promise<void>;

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
  shared: Map<string, unknown>;
}

export interface PluginInstance {
  /** Onion middleware on the chat chain; calls next() exactly once. */
  middleware: GatewayMiddleware;
  close?(): Promise<void> | void;
}

/**
 * A plugin: a name, a JSON Schema for its YAML section (validated with defaults and
 * frozen before setup), what it needs earlier in the chain and what it provides to
 * later ones, and a setup that does the expensive work once.
 */
export interface Plugin<C = Record<string, unknown>> {
  name: string;
  description?: string;
  configSchema: Record<string, unknown>;
  /** Capabilities that a plugin earlier in the chain must provide (e.g. 'principal'). */
  requires?: readonly string[];
  /** Capabilities this plugin provides to plugins after it. */
  provides?: readonly string[];
  /** True for the one plugin that ends the chain (it produces the result). */
  terminal?: boolean;
  setup(config: Readonly<C>, services: PluginServices): PluginInstance | Promise<PluginInstance>;
}

/** Identity with types: `export default definePlugin<MyConfig>({...})`. */
export function definePlugin<C>(plugin: Plugin<C>): Plugin<C> {
  return plugin;
}
