import type * as Api from '@opentelemetry/api';
import type { TracingConfig } from './schema';

export interface TracingSetup {
  api: typeof Api;
  tracer: Api.Tracer;
  extract(headers: Record<string, string | string[] | undefined>): Api.Context;
  inject(ctx: Api.Context): Record<string, string>;
  shutdown(): Promise<void>;
}

function envHeaders(raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (raw ?? '').split(',')) {
    const i = part.indexOf('=');
    if (i > 0) out[decodeURIComponent(part.slice(0, i).trim())] = decodeURIComponent(part.slice(i + 1).trim());
  }
  return out;
}

/** The tracer, its OTLP/HTTP exporter and the W3C propagator, loaded only when tracing is configured. */
export function createTracer(config: TracingConfig, env: NodeJS.ProcessEnv = process.env): TracingSetup {
  const api = require('@opentelemetry/api') as typeof Api;
  const { BasicTracerProvider, BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } =
    require('@opentelemetry/sdk-trace-base') as typeof import('@opentelemetry/sdk-trace-base');
  const { OTLPTraceExporter } =
    require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { W3CTraceContextPropagator } = require('@opentelemetry/core') as typeof import('@opentelemetry/core');

  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT
    ? `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/$/, '')}/v1/traces`
    : 'http://127.0.0.1:4318/v1/traces';
  const url = config.endpoint ?? env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? base;
  const exporter = new OTLPTraceExporter({
    url,
    headers: { ...envHeaders(env.OTEL_EXPORTER_OTLP_HEADERS), ...config.headers },
  });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({
      'service.name': config.service_name ?? env.OTEL_SERVICE_NAME ?? 'model-gateway',
    }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(config.sample_ratio) }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 })],
  });
  const tracer = provider.getTracer('model-gateway');
  const propagator = new W3CTraceContextPropagator();
  const getter: Api.TextMapGetter<Record<string, string | string[] | undefined>> = {
    keys: (c) => Object.keys(c),
    get: (c, k) => c[k.toLowerCase()],
  };
  const setter: Api.TextMapSetter<Record<string, string>> = { set: (c, k, v) => void (c[k] = v) };
  return {
    api,
    tracer,
    extract: (headers) => propagator.extract(api.ROOT_CONTEXT, headers, getter),
    inject: (ctx) => {
      const out: Record<string, string> = {};
      propagator.inject(ctx, out, setter);
      return out;
    },
    shutdown: () => provider.shutdown(),
  };
}
