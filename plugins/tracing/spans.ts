/**
 * @module
 * The tracing plugin's spans besides the request's own: one per upstream attempt (an attempt hook) and one per plugin
 * the request passed (a plugin timer), and how the request's span ends.
 */
import type * as Api from '@opentelemetry/api';
import type { GatewayState, PluginTimer, Usage } from '../../src/plugin';
import { usageAttributes } from './attributes';
import type { TracingSetup } from './sdk';

/** Where a request keeps its span's context, in `s.extensions`. */
export const SPAN = 'tracing.span';

type AttemptHook = NonNullable<GatewayState['attemptHooks']>[number];

/**
 * Plugin spans: one per plugin a traced request passed, under the request's span, with the plugin's own time as an
 * attribute (its span covers the plugins after it too).
 */
export function pluginSpans(tracer: Api.Tracer): PluginTimer {
  return (plugin, seconds, startedAtMs, totalMs, ctx) => {
    const parent = ctx.state.gateway?.extensions[SPAN] as Api.Context | undefined;
    if (!parent || plugin === 'tracing') return;
    tracer
      .startSpan(
        `plugin ${plugin}`,
        { startTime: startedAtMs, attributes: { 'gateway.plugin': plugin, 'gateway.plugin.self_seconds': seconds } },
        parent,
      )
      .end(startedAtMs + totalMs);
  };
}

/**
 * The request's attempt hook: a CLIENT span per upstream attempt, under the request's span, whose traceparent goes
 * upstream with the attempt; it ends (with the attempt's error, if any) when the attempt does.
 */
export function attemptSpans(t: TracingSetup, s: GatewayState, spanCtx: Api.Context): AttemptHook {
  const { api, tracer } = t;
  return (attempt) => {
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
  };
}

/**
 * The request's span ends: the provider that answered, the response's model and id, usage, finish reasons, the error's
 * code; `content` is the answer, when content is captured.
 */
export function endRequestSpan(
  api: TracingSetup['api'],
  span: Api.Span,
  s: GatewayState,
  usage: Usage | null | undefined,
  finishReasons: Array<string | null>,
  errorCode: string | null,
  content?: string,
): void {
  const last = s.attempts[s.attempts.length - 1];
  if (last) span.setAttribute('gen_ai.provider.name', last.provider);
  span.setAttribute('gen_ai.response.model', s.model.id);
  span.setAttribute('gen_ai.response.id', s.completionId);
  span.setAttributes(usageAttributes(usage));
  const reasons = finishReasons.filter((r): r is string => typeof r === 'string');
  if (reasons.length) span.setAttribute('gen_ai.response.finish_reasons', reasons);
  if (content !== undefined) span.setAttribute('gen_ai.output.messages', content);
  if (errorCode) {
    span.setAttribute('error.type', errorCode);
    span.setStatus({ code: api.SpanStatusCode.ERROR });
  }
  span.end();
}
