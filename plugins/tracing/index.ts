/**
 * @module
 * The tracing plugin: OpenTelemetry traces, one span per chat request and a child per upstream attempt, with the
 * GenAI semantic-convention attributes (middleware.ts, spans.ts, attributes.ts). A client's W3C traceparent continues
 * its trace and the gateway forwards its own to the upstream. Export is OTLP/HTTP (sdk.ts). Without this plugin in
 * the chain no OpenTelemetry code is even loaded. See README.md.
 *
 * @example
 * ```yaml
 * plugins:
 *   - metrics
 *   - tracing:
 *       endpoint: http://127.0.0.1:4318/v1/traces   # else OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else ..._ENDPOINT
 *       headers: {}                                 # merged over OTEL_EXPORTER_OTLP_HEADERS
 *       service_name: model-gateway                 # else OTEL_SERVICE_NAME
 *       capture_content: false
 *       sample_ratio: 1                             # new traces; a client's sampled parent is followed
 *   - auth
 *   - routing
 * ```
 */
import { addPluginTimer, definePlugin, TRACER } from '../../src/plugin';
import { createTracer } from './sdk';
import { pluginSpans } from './spans';
import { tracingMiddleware } from './middleware';
import { configSchema, type TracingConfig } from './schema';

export default definePlugin<TracingConfig>({
  name: 'tracing',
  description: 'OpenTelemetry traces (GenAI semantic conventions), exported over OTLP/HTTP.',
  configSchema,
  setup(config, services) {
    const t = createTracer(config);
    addPluginTimer(services.shared, pluginSpans(t.tracer));
    // For spans of work outside the chat chain (the mcp plugin's tool calls).
    services.shared.set(TRACER, t.tracer);
    return { middleware: tracingMiddleware(t, config), close: () => t.shutdown() };
  },
});
