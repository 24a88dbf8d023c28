/**
 * @module
 * The metrics plugin: Prometheus metrics (`GET /metrics`, routes.ts): requests, gateway-added and upstream latency,
 * time to first token, tokens, credits, upstream errors, retries, in-flight requests and open streams (metrics.ts,
 * counted by middleware.ts), per-plugin time, store operations, the event loop's delay and the process. Put it first
 * in the chain. See README.md.
 *
 * @example
 * ```yaml
 * plugins:
 *   - metrics:
 *       # token: ${METRICS_TOKEN}   # require "Authorization: Bearer <token>" on /metrics
 *       # port: 9464                # serve /metrics on this port only (on server.host)
 *       key_label: false            # true adds key="<first 12 hex of the key's SHA-256>" to gateway_requests_total
 *       loop_delay_resolution_ms: 10
 *   - auth
 *   - routing
 * ```
 */
import {
  addPluginTimer,
  collectDefaultMetrics,
  definePlugin,
  HTTP_OBSERVER,
  type HttpObserver,
  type PluginTimer,
} from '../../src/plugin';
import { createInstruments, statusClass } from './metrics';
import { LoopDelayHistogram } from './loop-delay';
import { metricsMiddleware } from './middleware';
import { serveMetrics } from './routes';
import { configSchema, type MetricsConfig } from './schema';

export default definePlugin<MetricsConfig>({
  name: 'metrics',
  description: 'Prometheus metrics on /metrics.',
  configSchema,
  async setup(config, services) {
    const registry = services.metrics;
    // Process metrics (and their GC observer and loop timer) only where /metrics is served.
    collectDefaultMetrics(registry);
    const m = createInstruments(registry, config.key_label);
    const loopDelay = new LoopDelayHistogram(config.loop_delay_resolution_ms).register(registry);
    const timer: PluginTimer = (plugin, seconds) => m.plugin.with(plugin).observe(seconds);
    addPluginTimer(services.shared, timer);
    const http: HttpObserver = (route, method, status) => m.http.with(route, method, statusClass(status)).inc();
    services.shared.set(HTTP_OBSERVER, http);
    services.store.db.observe((op, seconds, failed) => {
      m.store.with(op).observe(seconds);
      if (failed) m.storeErrors.inc({ op });
    });
    const server = await serveMetrics(registry, config, services.router, services.config.server.host);
    return {
      middleware: metricsMiddleware(m, config.key_label),
      async close() {
        loopDelay.close();
        if (server) await new Promise<void>((r) => server.close(() => r()));
      },
    };
  },
});
