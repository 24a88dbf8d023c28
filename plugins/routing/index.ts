import { randomId } from '../../src/ids';
import { definePlugin } from '../../src/pipeline/plugin';
import { errors, GatewayError, toGatewayError } from '../../src/errors';
import type { Attempt, GatewayState } from '../../src/pipeline/state';
import type { AdapterContext } from '../../src/providers/types';
import { countPromptTokens } from '../../src/tokens/count';
import { attemptSignal } from './attempt-signal';
import { defaultPlan } from './plan';
import { callPlain, callStream } from './upstream';
import { openStream } from './stream-result';

export interface RoutingConfig {
  /** Longest silence between two chunks of an upstream stream. */
  stream_idle_timeout_ms: number;
}

/** A completion id in OpenAI's form: `chatcmpl-` and 24 base62-ish characters. */
export function newCompletionId(): string {
  return randomId('chatcmpl-');
}

/**
 * The terminal plugin: executes the attempt plan (written by `fallback`, or one of its
 * own when there is none) against the provider adapters, and leaves the result in state.
 */
export default definePlugin<RoutingConfig>({
  name: 'routing',
  description: 'Calls the upstream provider chosen by the model id; ends the chain.',
  terminal: true,
  provides: ['result'],
  configSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      stream_idle_timeout_ms: { type: 'integer', minimum: 1, default: 120000 },
    },
  },
  setup(config, services) {
    const { transport, models } = services;

    async function attemptOnce(s: GatewayState, a: Attempt, ctx: AdapterContext) {
      const started = performance.now();
      const sig = attemptSignal(s.signal, s.options.timeoutMs, a.provider.name);
      const ends = s.attemptHooks?.map((h) => h(a));
      const extraHeaders = s.upstreamHeaders ? { ...s.options.headers, ...s.upstreamHeaders } : s.options.headers;
      const opts = { signal: sig.signal, headersTimeoutMs: s.options.timeoutMs, idleTimeoutMs: config.stream_idle_timeout_ms, extraHeaders };
      const record = { provider: a.provider.name, deployment: `${a.provider.name}/${a.deployment.model}`, model: a.model.id, status: 'ok' as 'ok' | 'error', latencyMs: 0 };
      try {
        if (s.request.stream === true) {
          const stream = await openStream(callStream(a, transport, ctx, opts), sig, countPromptTokens(a.request));
          s.result = { kind: 'stream', stream };
        } else {
          try {
            s.result = { kind: 'completion', body: await callPlain(a, transport, ctx, opts) };
          } finally {
            sig.dispose();
          }
        }
        return record;
      } catch (e) {
        const err = sig.signal.aborted && sig.signal.reason instanceof GatewayError ? sig.signal.reason : toGatewayError(e);
        (record as { error?: { code: string; status: number } }).error = { code: err.code, status: err.status };
        record.status = 'error';
        throw err;
      } finally {
        record.latencyMs = performance.now() - started;
        s.upstreamMs += record.latencyMs;
        s.attempts.push(record);
        if (ends) for (const end of ends) end(record);
      }
    }

    return {
      async middleware(ctx) {
        const s = ctx.state.gateway;
        const plan = s.plan ?? defaultPlan(s, s.model, models);
        const actx: AdapterContext = {
          id: s.extensions.completionId as string | undefined ?? newCompletionId(),
          created: Math.floor(Date.now() / 1000),
          model: s.model.id,
          includeUsage: s.request.stream_options?.include_usage === true,
        };
        s.extensions.completionId = actx.id;
        let last: GatewayError | undefined;
        for (const a of plan.attempts) {
          actx.model = a.model.id;
          for (let r = 0; r <= plan.retries; r++) {
            if (s.signal.aborted) throw toGatewayError(s.signal.reason);
            try {
              const rec = await attemptOnce(s, a, actx);
              s.responseHeaders['X-Gateway-Attempts'] = String(s.attempts.length);
              s.responseHeaders['X-Gateway-Deployment'] = rec.deployment;
              return;
            } catch (e) {
              last = toGatewayError(e);
              if (!last.retryable) throw last;
            }
          }
        }
        throw last ?? errors.internal();
      },
    };
  },
});
