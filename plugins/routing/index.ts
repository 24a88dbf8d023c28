import {
  defaultPlan,
  definePlugin,
  deploymentKey,
  errors,
  forwardableHeaders,
  GatewayError,
  HEALTH,
  isGatewayError,
  nowMs,
  promptTokens,
  reasoningAsk,
  toGatewayError,
  type AdapterContext,
  type Attempt,
  type AttemptRecord,
  type AttemptTicket,
  type AttemptUse,
  type DeploymentHealth,
  type GatewayState,
  type PromptOptions,
} from '../../src/plugin';
import { AttemptAbort } from './attempt-signal';
import { setTimeout as sleep } from 'node:timers/promises';
import { countsAgainstDeployment } from './fault';
import { backoffMs } from './backoff';

const PROMPT_FIELDS = [
  'initial_prompt_value',
  'roles',
  'final_prompt_value',
  'bos_token',
  'eos_token',
  'hf_model_name',
] as const;

/** The request's prompt-template fields, if it sent any. */
function promptOptionsOf(o: Record<string, unknown>): PromptOptions | undefined {
  let out: Record<string, unknown> | undefined;
  for (const f of PROMPT_FIELDS) if (o[f] !== undefined) (out ??= {})[f] = o[f];
  return out as PromptOptions | undefined;
}
import { callPlain, callStream } from './upstream';

const FAILED: AttemptUse = { ok: false, tokens: 0 };

/** A refused attempt, in the request's attempt log: nothing reached the upstream. */
function skipped(s: GatewayState, a: Attempt, t: Extract<AttemptTicket, { ok: false }>): void {
  s.attempts.push({
    provider: a.provider.name,
    deployment: `${a.provider.name}/${a.deployment.model}`,
    model: a.model.id,
    status: 'skipped',
    guard: t.guard,
    error: { code: t.error.code, status: t.error.status },
    latencyMs: 0,
  });
}

/** Tell the guards what the attempt that answered used: now for a whole answer, at its end for a stream. */
function endWithResult(s: GatewayState, end: (use: AttemptUse) => void): void {
  const r = s.result;
  if (r?.kind === 'stream')
    r.stream.observe({ name: 'attempt-guards', onEnd: (e) => end({ ok: true, tokens: e.usage?.total_tokens }) });
  else if (r?.kind === 'completion') end({ ok: true, tokens: r.body.usage?.total_tokens });
  else if (r?.kind === 'embeddings') end({ ok: true, tokens: r.body.usage?.total_tokens });
  else end(FAILED);
}
import { openStream } from './stream-result';
import { callEmbeddings } from './embeddings';

export interface RoutingConfig {
  /** Longest silence between two chunks of an upstream stream. */
  stream_idle_timeout_ms: number;
  /** Largest plain (non-streamed) upstream answer, bytes: beyond it, 502 upstream_response_too_large. */
  max_response_bytes: number;
  /** Largest single stream line (SSE, NDJSON) or frame (AWS event stream), bytes: beyond it, an error event. */
  max_event_bytes: number;
  /** Headers a client may forward upstream (`headers` / `extra_headers`): how many, and their total bytes. */
  max_forwarded_headers: number;
  max_forwarded_header_bytes: number;
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
      max_response_bytes: { type: 'integer', minimum: 1024, default: 16 * 1024 * 1024 },
      max_event_bytes: { type: 'integer', minimum: 1024, default: 4 * 1024 * 1024 },
      max_forwarded_headers: { type: 'integer', minimum: 0, maximum: 1000, default: 32 },
      max_forwarded_header_bytes: { type: 'integer', minimum: 0, default: 8192 },
    },
  },
  setup(config, services) {
    const { transport, models, attemptGuards: guards } = services;
    const limits = { maxResponseBytes: config.max_response_bytes, maxEventBytes: config.max_event_bytes };
    const logError = (provider: string, status: number, text: string) =>
      services.logger.warn({ provider, status, upstreamError: text }, 'upstream error answer');
    const forwardLimits = { maxHeaders: config.max_forwarded_headers, maxBytes: config.max_forwarded_header_bytes };

    async function attemptOnce(
      s: GatewayState,
      a: Attempt,
      ctx: AdapterContext,
      clientHeaders: Record<string, string> | undefined,
      health: DeploymentHealth | undefined,
    ) {
      const started = nowMs();
      const key = deploymentKey(a.deployment);
      health?.begin(key);
      const sig = new AttemptAbort(s.abort, s.options.timeoutMs, a.provider.name);
      const ends = s.attemptHooks?.map((h) => h(a));
      const extraHeaders = s.upstreamHeaders ? { ...clientHeaders, ...s.upstreamHeaders } : clientHeaders;
      const opts = {
        abort: sig,
        headersTimeoutMs: s.options.timeoutMs,
        idleTimeoutMs: config.stream_idle_timeout_ms,
        extraHeaders,
        promptOptions: promptOptionsOf(s.options),
        limits,
        logError,
      };
      const record: AttemptRecord = {
        provider: a.provider.name,
        deployment: `${a.provider.name}/${a.deployment.model}`,
        model: a.model.id,
        status: 'ok',
        latencyMs: 0,
      };
      try {
        if (s.embeddings) {
          try {
            s.result = { kind: 'embeddings', body: await callEmbeddings(a, transport, s.embeddings, opts) };
          } finally {
            sig.dispose();
          }
        } else if (s.request.stream === true) {
          const stream = await openStream(callStream(a, transport, ctx, opts), sig, () => promptTokens(s));
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
        const err = sig.aborted && isGatewayError(sig.reason) ? sig.reason : toGatewayError(e);
        record.error = { code: err.code, status: err.status };
        record.status = 'error';
        throw err;
      } finally {
        record.latencyMs = nowMs() - started;
        s.upstreamMs += record.latencyMs;
        s.attempts.push(record);
        if (ends) for (const end of ends) end(record);
        // A 4xx that is the request's fault, a client gone or a client's own short `timeout` says nothing about the
        // deployment's health.
        health?.end(key, record.status === 'ok' || !countsAgainstDeployment(record, s), record.latencyMs);
      }
    }

    return {
      async middleware(ctx) {
        const s = ctx.state.gateway;
        const health = services.shared.get(HEALTH);
        const plan = s.plan ?? defaultPlan(s, s.model, models, health);
        const actx: AdapterContext = {
          id: s.completionId,
          created: Math.floor(Date.now() / 1000),
          model: s.model.id,
          includeUsage: s.request.stream_options?.include_usage === true,
          excludeReasoning: reasoningAsk(s.request)?.exclude === true,
        };
        const clientHeaders = forwardableHeaders(
          [
            s.options.headers as Record<string, unknown> | undefined,
            s.options.extra_headers as Record<string, unknown> | undefined,
          ],
          forwardLimits,
        );
        let queue = plan.attempts;
        let last: GatewayError | undefined;
        let refusal: GatewayError | undefined;
        let calls = 0;
        const maxCalls = plan.maxAttempts ?? Infinity;
        for (let i = 0; i < queue.length && calls < maxCalls; i++) {
          const a = queue[i];
          if (s.abort.aborted) throw toGatewayError(s.abort.reason);
          if (a.retry && plan.backoff && calls > 0)
            await sleep(backoffMs(a.retry, last, plan.backoff), undefined, { signal: s.signal }).catch(() => undefined);
          let ticket = guards.admit(s, a);
          if (ticket instanceof Promise) ticket = await ticket;
          if (!ticket.ok) {
            skipped(s, a, ticket);
            refusal ??= ticket.error;
            continue;
          }
          calls++;
          actx.model = a.model.id;
          actx.provider = a.provider.name;
          try {
            const rec = await attemptOnce(s, a, actx, clientHeaders, health);
            if (ticket.end) endWithResult(s, ticket.end);
            s.responseHeaders['X-Gateway-Attempts'] = String(calls);
            s.responseHeaders['X-Gateway-Deployment'] = rec.deployment;
            return;
          } catch (e) {
            ticket.end?.(FAILED);
            last = toGatewayError(e);
            if (last.code === 'context_length_exceeded' && plan.contextFallback) {
              queue = plan.contextFallback;
              plan.contextFallback = undefined;
              i = -1;
              continue;
            }
            if (!last.retryable) throw last;
          }
        }
        // Every attempt refused by a guard (or the rest of them after failures): the first refusal says why.
        // An empty plan: every deployment was left out (a strategy or an allowlist).
        throw refusal ?? last ?? errors.noDeployment(s.model.id);
      },
    };
  },
});
