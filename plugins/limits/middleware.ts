/**
 * @module
 * The limits plugin's step on the chat chain: the key's allowlist for the model asked for, then one admission for the
 * request against its key's and account's limits (and its first attempt's model scopes), held until the answer or
 * its stream ends. The attempts after the first are counted by the attempt guard (guard.ts).
 */
import {
  defaultPlan,
  errors,
  HEALTH,
  randomId,
  type Attempt,
  type GatewayContext,
  type GatewayState,
  type ModelRegistry,
  type Next,
  type SharedServices,
} from '../../src/plugin';
import type { BudgetAlerts } from './alerts';
import type { Admitter } from './counters';
import { prune } from './guard';
import { rateLimitHeaders } from './headers';
import { isAllowAll } from './model-match';
import { isModelScope, type Governance } from './scopes';
import { planTokenBound } from './token-bound';

export interface LimitsDeps {
  governance: Governance;
  admitter: Admitter;
  alerts: BudgetAlerts;
  models: ModelRegistry;
  shared: SharedServices;
  /** Shared with the attempt guard: the first attempt whose model scopes the request's admission counted. */
  preAdmitted: WeakMap<GatewayState, Attempt>;
}

export function limitsMiddleware({ governance, admitter, alerts, models, shared, preAdmitted }: LimitsDeps) {
  return async function limits(ctx: GatewayContext, next: Next): Promise<void> {
    const s = ctx.state.gateway;
    const p = s.principal;
    if (!p) throw errors.internal();
    // Cached (the usual case): no promise to wait for (docs/decisions/0032-plugin-hot-path-shapes.md).
    const asked =
      governance.cachedFor(p.keyHash, p.accountId, s.model.id) ??
      (await governance.forRequest(p.keyHash, p.accountId, s.model.id));
    if (!asked.allow(s.model.id)) throw errors.modelNotAllowed(s.model.id);
    // The plan fallback wrote, or the one routing would make (credit then reserves for this same one).
    const plan = s.plan ?? (s.plan = defaultPlan(s, s.model, models, shared.get(HEALTH)));
    if (!isAllowAll(asked.allow)) prune(s, plan, asked.allow);
    // The first attempt's model scopes are counted with the request (one admission for a direct call).
    const first = plan.attempts[0]?.model ?? s.model;
    const gov =
      first === s.model
        ? asked
        : (governance.cachedFor(p.keyHash, p.accountId, first.id) ??
          (await governance.forRequest(p.keyHash, p.accountId, first.id)));
    let scopes = gov.scopes;
    if (scopes.length === 0) {
      try {
        await next();
      } finally {
        alerts.poke(p.keyHash, gov.ownAlerts);
      }
      return;
    }
    const id = randomId('lim_');
    // The plan's token bound (credit's, a walk over each attempt's request) only matters to a tokens/min limit.
    const tokens = scopes.some((sc) => sc.tpm > 0) ? planTokenBound(s, plan) : 0;
    let { admission, by } = await admitter.now(id, tokens, scopes);
    if (!admission.ok && isModelScope(scopes[admission.scope]) && plan.attempts.some((a) => a.model !== first)) {
      // The first model is at its limit but the plan has others: count the request alone; the guard skips the
      // attempts on that model.
      scopes = scopes.filter((sc) => !isModelScope(sc));
      ({ admission, by } = await admitter.now(id, tokens, scopes));
    } else if (admission.ok && gov.modelScopes.length > 0 && plan.attempts[0]) {
      preAdmitted.set(s, plan.attempts[0]);
    }
    if (!admission.ok) {
      ctx.set(rateLimitHeaders(scopes, admission.usage));
      throw admitter.refused(admission, scopes, tokens);
    }
    Object.assign(s.responseHeaders, rateLimitHeaders(scopes, admission.usage));
    let done = false;
    const held = scopes;
    const finish = (used: number) => {
      if (done) return;
      done = true;
      // A response-cache hit the operator does not count: as if never admitted (the cache plugin's state.cache).
      if (s.cache?.status === 'hit' && !s.cache.countsLimits) void by.release(id, held);
      else void by.finish(id, held, used);
      alerts.poke(p.keyHash, gov.ownAlerts);
    };
    try {
      await next();
    } catch (e) {
      finish(0);
      throw e;
    }
    const result = s.result;
    if (result?.kind === 'completion') finish(result.body.usage?.total_tokens ?? tokens);
    else if (result?.kind === 'embeddings') finish(result.body.usage?.total_tokens ?? tokens);
    else if (result?.kind === 'stream')
      result.stream.observe({ name: 'limits', onEnd: (end) => finish(end.usage?.total_tokens ?? 0) });
    else finish(0);
  };
}
