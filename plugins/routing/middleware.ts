/**
 * @module
 * The routing plugin's step, the last of the chat chain: run the attempt plan until one attempt answers.
 */
import {
  defaultPlan,
  errors,
  forwardableHeaders,
  HEALTH,
  reasoningAsk,
  toGatewayError,
  type AdapterContext,
  type AttemptGuards,
  type DeploymentMeasures,
  type GatewayContext,
  type GatewayError,
  type ModelRegistry,
  type SharedServices,
} from '../../src/plugin';
import { setTimeout as sleep } from 'node:timers/promises';
import { backoffMs } from './backoff';
import { endWithResult, FAILED, nameProvider, skipped, type AttemptOnce } from './attempt';

export interface RoutingDeps {
  models: ModelRegistry;
  guards: AttemptGuards;
  shared: SharedServices;
  /** How many client headers may be forwarded upstream, and their total bytes. */
  forwardLimits: { maxHeaders: number; maxBytes: number };
  attemptOnce: AttemptOnce;
  measures?: DeploymentMeasures;
}

/**
 * The plan (fallback's, or one of each of the model's deployments) is run in order: each attempt passes the guards
 * first, waits its backoff when it is a retry, and a retryable failure moves on; a context-window error moves to the
 * context fallback at once.
 */
export function routingMiddleware({ models, guards, shared, forwardLimits, attemptOnce, measures }: RoutingDeps) {
  return async function routing(ctx: GatewayContext): Promise<void> {
    const s = ctx.state.gateway;
    const health = shared.get(HEALTH);
    const plan = s.plan ?? defaultPlan(s, s.model, models, health, measures);
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
        s.served = a;
        nameProvider(s, a.provider.name);
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
  };
}
