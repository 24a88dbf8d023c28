import { addPluginTimer, definePlugin, toGatewayError, type Usage } from '../../src/plugin';
import { createTracer, type TracingSetup } from './sdk';
import { messagesForSpan, requestAttributes, usageAttributes } from './attributes';

export interface TracingConfig {
  /**
   * OTLP/HTTP traces endpoint; default: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT +
   * /v1/traces.
   */
  endpoint?: string;
  /** Extra export headers (e.g. an API key of the collector); default from OTEL_EXPORTER_OTLP_HEADERS. */
  headers: Record<string, string>;
  /** Default: OTEL_SERVICE_NAME, else model-gateway. */
  service_name?: string;
  /** Put prompts and answers on spans (gen_ai.input.messages / gen_ai.output.messages). Off by default. */
  capture_content: boolean;
  /** Fraction of new traces sampled (a client's sampled traceparent is always followed). */
  sample_ratio: number;
}

/**
 * OpenTelemetry traces: one span per chat request and a child per upstream attempt, with
 * the GenAI semantic-convention attributes. A client's W3C traceparent continues its
 * trace and the gateway forwards its own to the upstream. Export is OTLP/HTTP. Without
 * this plugin in the chain no OpenTelemetry code is even loaded.
 */
export default definePlugin<TracingConfig>({
  name: 'tracing',
  description: 'OpenTelemetry traces (GenAI semantic conventions), exported over OTLP/HTTP.',
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      endpoint: { type: 'string', pattern: '^https?://' },
      headers: { type: 'object', additionalProperties: { type: 'string' }, default: {} },
      service_name: { type: 'string', minLength: 1 },
      capture_content: { type: 'boolean', default: false },
      sample_ratio: { type: 'number', minimum: 0, maximum: 1, default: 1 },
    },
  },
  setup(config, services) {
    const t: TracingSetup = createTracer(config);
    const { api, tracer } = t;
    const SPAN = 'tracing.span';
    // Plugin spans: one per plugin a traced request passed, under the request's span, with
    // the plugin's own time as an attribute (its span covers the plugins after it too).
    addPluginTimer(services.shared, (plugin, seconds, startedAtMs, totalMs, ctx) => {
      const parent = ctx.state.gateway?.extensions[SPAN] as import('@opentelemetry/api').Context | undefined;
      if (!parent || plugin === 'tracing') return;
      tracer
        .startSpan(
          `plugin ${plugin}`,
          { startTime: startedAtMs, attributes: { 'gateway.plugin': plugin, 'gateway.plugin.self_seconds': seconds } },
          parent,
        )
        .end(startedAtMs + totalMs);
    });
    return {
      async middleware(ctx, next) {
        const s = ctx.state.gateway;
        const parent = t.extract(ctx.headers);
        const span = tracer.startSpan(
          `chat ${s.model.id}`,
          { kind: api.SpanKind.SERVER, attributes: requestAttributes(s) },
          parent,
        );
        if (config.capture_content) span.setAttribute('gen_ai.input.messages', messagesForSpan(s.request.messages));
        const spanCtx = api.trace.setSpan(parent, span);
        s.extensions[SPAN] = spanCtx;
        s.attemptHooks = [
          ...(s.attemptHooks ?? []),
          (attempt) => {
            const child = tracer.startSpan(
              `chat ${attempt.deployment.model}`,
              {
                kind: api.SpanKind.CLIENT,
                attributes: {
                  'gen_ai.operation.name': s.operation === 'embeddings' ? 'embeddings' : 'chat',
                  'gen_ai.provider.name': attempt.provider.type,
                  'gen_ai.request.model': attempt.deployment.model,
                  'gateway.provider': attempt.provider.name,
                },
              },
              spanCtx,
            );
            s.upstreamHeaders = { ...s.upstreamHeaders, ...t.inject(api.trace.setSpan(spanCtx, child)) };
            return (record) => {
              if (record.error) {
                child.setAttribute('error.type', record.error.code);
                child.setStatus({ code: api.SpanStatusCode.ERROR });
              }
              child.end();
            };
          },
        ];
        const finish = (
          usage: Usage | null | undefined,
          finishReasons: Array<string | null>,
          errorCode: string | null,
          content?: string,
        ) => {
          const last = s.attempts[s.attempts.length - 1];
          if (last) span.setAttribute('gen_ai.provider.name', last.provider);
          span.setAttribute('gen_ai.response.model', s.model.id);
          span.setAttribute('gen_ai.response.id', s.completionId);
          span.setAttributes(usageAttributes(usage));
          const reasons = finishReasons.filter((r): r is string => typeof r === 'string');
          if (reasons.length) span.setAttribute('gen_ai.response.finish_reasons', reasons);
          if (config.capture_content && content !== undefined) span.setAttribute('gen_ai.output.messages', content);
          if (errorCode) {
            span.setAttribute('error.type', errorCode);
            span.setStatus({ code: api.SpanStatusCode.ERROR });
          }
          span.end();
        };
        try {
          await next();
        } catch (e) {
          finish(null, [], toGatewayError(e).code);
          throw e;
        }
        const result = s.result;
        if (result?.kind === 'completion') {
          const c = result.body;
          finish(
            c.usage,
            c.choices.map((ch) => ch.finish_reason),
            null,
            config.capture_content ? JSON.stringify(c.choices.map((ch) => ch.message)) : undefined,
          );
        } else if (result?.kind === 'stream') {
          let text = '';
          result.stream.observe({
            name: 'tracing',
            onChunk: config.capture_content
              ? (chunk) => void (text += chunk.choices[0]?.delta.content ?? '')
              : undefined,
            onEnd: (end) =>
              finish(
                end.usage,
                end.finishReasons,
                end.error?.code ?? (end.cancelled ? 'client_closed_request' : null),
                config.capture_content ? JSON.stringify([{ role: 'assistant', content: text }]) : undefined,
              ),
          });
        } else if (result?.kind === 'embeddings') finish({ ...result.body.usage, completion_tokens: 0 }, [], null);
        else finish(null, [], 'no_result');
      },
      close: () => t.shutdown(),
    };
  },
});
