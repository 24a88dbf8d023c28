/**
 * Hooks the core calls when a plugin has registered them in services.shared at setup
 * (the metrics plugin does). Unregistered, they cost nothing.
 */

/** Told each plugin's own time (seconds, excluding the plugins after it) when a request has passed it. */
export type PluginTimer = (plugin: string, seconds: number) => void;
export const PLUGIN_TIMER = 'pipeline.timer';

/** Told of every HTTP request: the route pattern (never the raw path), method, status, seconds. */
export type HttpObserver = (route: string, method: string, status: number, seconds: number) => void;
export const HTTP_OBSERVER = 'http.observer';
