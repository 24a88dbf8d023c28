/** Library entry: build or start a gateway from code. */
export { createApp } from './app';
export { startGateway } from './start';
export { loadConfigFile, parseConfig, fromObject, ConfigError } from './config/load';
export { definePlugin } from './pipeline/plugin';
export type { Plugin, PluginServices, GatewayContext } from './pipeline/plugin';
export { GatewayError, errors } from './errors';
