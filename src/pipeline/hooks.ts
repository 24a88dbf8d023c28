import type { GatewayContext } from './plugin';
import type { SharedServices } from './shared-services';

/**
 * Hooks the core calls when a plugin has registered them in services.shared at setup
 * (the metrics plugin does). Unregistered, they cost nothing.
 */

/**
 * Told, when a request has passed a plugin: its name, its own time in seconds (excluding
 * the plugins after it), when it started and its whole time (epoch ms, ms), and the request.
 * Several plugins may time the chain: add yours with addPluginTimer.
 */
export type PluginTimer = (
  plugin: string,
  seconds: number,
  startedAtMs: number,
  totalMs: number,
  ctx: GatewayContext,
) => void;
export const PLUGIN_TIMER = 'pipeline.timer';

/** Register a timer beside any already registered (metrics and tracing both time plugins). */
export function addPluginTimer(shared: SharedServices, timer: PluginTimer): void {
  const prev = shared.get(PLUGIN_TIMER);
  shared.set(
    PLUGIN_TIMER,
    prev
      ? (...a: Parameters<PluginTimer>) => {
          prev(...a);
          timer(...a);
        }
      : timer,
  );
}

/** Told of every HTTP request: the route pattern (never the raw path), method, status, seconds. */
export type HttpObserver = (route: string, method: string, status: number, seconds: number) => void;
export const HTTP_OBSERVER = 'http.observer';

/** A part's own readiness for GET /ready; `degraded` still answers 200 and says why. */
export type ReadinessCheck = () => { name: string; status: 'ok' | 'degraded'; detail?: string };
export const READINESS = 'ready.checks';

export function addReadinessCheck(shared: SharedServices, check: ReadinessCheck): void {
  shared.set(READINESS, [...(shared.get(READINESS) ?? []), check]);
}

/**
 * Work that must wait until the gateway listens (startGateway runs these once the port is bound and every plugin is
 * set up): a first start's keys are created and printed only then, so that a start that fails (the port taken, a
 * plugin's error) leaves nothing behind that the retry would not print again.
 */
export type ListeningHook = () => Promise<void>;
export const LISTENING = 'server.listening';

export function addListeningHook(shared: SharedServices, hook: ListeningHook): void {
  shared.set(LISTENING, [...(shared.get(LISTENING) ?? []), hook]);
}
