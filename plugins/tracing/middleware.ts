/**
 * @module
 * The tracing plugin's step on the chat chain: the request's SERVER span, continuing a client's traceparent, ended
 * when the answer is complete (a stream: when it ends).
 */
import { toGatewayError, type GatewayContext, type Next } from '../../src/plugin';
import { messagesForSpan, requestAttributes } from './attributes';
import { attemptSpans, endRequestSpan, SPAN } from './spans';
import type { TracingSetup } from './sdk';
import type { TracingConfig } from './schema';

export function tracingMiddleware(t: TracingSetup, config: Readonly<TracingConfig>) {
  const { api, tracer } = t;
  return async function tracing(ctx: GatewayContext, next: Next): Promise<void> {
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
    s.attemptHooks = [...(s.attemptHooks ?? []), attemptSpans(t, s, spanCtx)];
    try {
      await next();
    } catch (e) {
      endRequestSpan(api, span, s, null, [], toGatewayError(e).code);
      throw e;
    }
    const result = s.result;
    if (result?.kind === 'completion') {
      const c = result.body;
      endRequestSpan(
        api,
        span,
        s,
        c.usage,
        c.choices.map((ch) => ch.finish_reason),
        null,
        config.capture_content ? JSON.stringify(c.choices.map((ch) => ch.message)) : undefined,
      );
    } else if (result?.kind === 'stream') {
      let text = '';
      result.stream.observe({
        name: 'tracing',
        readOnly: true,
        onChunk: config.capture_content ? (chunk) => void (text += chunk.choices[0]?.delta.content ?? '') : undefined,
        onEnd: (end) =>
          endRequestSpan(
            api,
            span,
            s,
            end.usage,
            end.finishReasons,
            end.error?.code ?? (end.cancelled ? 'client_closed_request' : null),
            config.capture_content ? JSON.stringify([{ role: 'assistant', content: text }]) : undefined,
          ),
      });
    } else if (result?.kind === 'embeddings')
      endRequestSpan(api, span, s, { ...result.body.usage, completion_tokens: 0 }, [], null);
    else endRequestSpan(api, span, s, null, [], 'no_result');
  };
}
