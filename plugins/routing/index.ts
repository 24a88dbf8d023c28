/**
 * @module
 * The routing plugin, the terminal one: it executes the attempt plan (written by `fallback`, or one of its own when
 * there is none) against the provider adapters (middleware.ts, attempt.ts, upstream.ts), and leaves the result in
 * `ctx.state.gateway.result`. See README.md.
 *
 * @example
 * ```yaml
 * plugins:
 *   - routing:
 *       stream_idle_timeout_ms: 120000   # longest silence between two upstream chunks
 *       max_response_bytes: 16777216     # largest plain upstream answer (502 upstream_response_too_large)
 *       max_event_bytes: 4194304         # largest stream line / SSE event / event-stream frame
 *       max_forwarded_headers: 32        # client headers/extra_headers forwarded upstream (400 too_many_headers)
 *       max_forwarded_header_bytes: 8192 # their total size (400 headers_too_large)
 *       measures: { publish_ms: 1000, refresh_ms: 1000 } # latency/throughput shared across replicas (sort, :nitro)
 *       presets_refresh_ms: 5000         # the admin API's presets (/v1/presets) read again from the store
 * ```
 */
import { definePlugin, deploymentKey, DeploymentMeasures, MEASURES } from '../../src/plugin';
import { presetCommands } from './cli';
import { presetRoutes } from './presets';
import { routingMigrations } from './store/migrations';
import { attemptRunner } from './attempt';
import { routingMiddleware } from './middleware';
import { configSchema, type RoutingConfig } from './schema';

export default definePlugin<RoutingConfig>({
  name: 'routing',
  description: 'Calls the upstream provider chosen by the model id; ends the chain.',
  terminal: true,
  provides: ['result'],
  configSchema,
  store: { migrations: routingMigrations },
  cli: { commands: presetCommands },
  async setup(config, services) {
    const keys = services.models.all().flatMap((m) => m.deployments.map(deploymentKey));
    const measures = new DeploymentMeasures(
      [...new Set(keys)],
      services.state,
      { publishMs: config.measures.publish_ms, refreshMs: config.measures.refresh_ms },
      (err: unknown) => services.logger.warn({ err }, 'deployment measures: shared state unavailable'),
    );
    services.shared.set(MEASURES, measures);
    const presets = await presetRoutes(config.presets_refresh_ms, services);
    const attemptOnce = attemptRunner({
      measures,
      transport: services.transport,
      idleTimeoutMs: config.stream_idle_timeout_ms,
      limits: { maxResponseBytes: config.max_response_bytes, maxEventBytes: config.max_event_bytes },
      logError: (provider: string, status: number, text: string) =>
        services.logger.warn({ provider, status, upstreamError: text }, 'upstream error answer'),
    });
    return {
      middleware: routingMiddleware({
        models: services.models,
        guards: services.attemptGuards,
        shared: services.shared,
        forwardLimits: { maxHeaders: config.max_forwarded_headers, maxBytes: config.max_forwarded_header_bytes },
        attemptOnce,
        measures,
      }),
      close() {
        measures.close();
        if (presets) clearInterval(presets);
      },
    };
  },
});
