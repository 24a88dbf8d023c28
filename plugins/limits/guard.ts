/**
 * @module
 * The limits plugin's attempt guard: every upstream attempt (first, retry, fallback, context-window fallback) passes
 * the allowlists for its model and counts against its model's and key x model's limits, with the tokens of the
 * attempt's own request. Also how the request's step leaves out of the plan the attempts the key may not make.
 */
import {
  errors,
  logSkipped,
  randomId,
  type Attempt,
  type AttemptGuard,
  type AttemptPlan,
  type AttemptVerdict,
  type GatewayState,
} from '../../src/plugin';
import type { Admitted, Admitter } from './counters';
import type { Governance, RequestGovernance } from './scopes';
import { attemptTokenBound } from './token-bound';

export interface GuardDeps {
  governance: Governance;
  admitter: Admitter;
  /** Per request that counted its first attempt's model scopes at admission: that attempt, not yet made. */
  preAdmitted: WeakMap<GatewayState, Attempt>;
}

/** The guard registered at setup (`services.attemptGuards`). */
export function limitsGuard(d: GuardDeps): AttemptGuard {
  const { governance } = d;
  return {
    name: 'limits',
    check(s, a) {
      const p = s.principal;
      if (!p) return undefined;
      const gov = governance.cachedFor(p.keyHash, p.accountId, a.model.id);
      return gov
        ? guardAttempt(d, s, a, gov)
        : governance.forRequest(p.keyHash, p.accountId, a.model.id).then((g) => guardAttempt(d, s, a, g));
    },
  };
}

function guardAttempt(
  { admitter, preAdmitted }: GuardDeps,
  s: GatewayState,
  a: Attempt,
  gov: RequestGovernance,
): AttemptVerdict | Promise<AttemptVerdict> {
  if (!gov.allow(a.model.id)) return { refuse: errors.modelNotAllowed(a.model.id) };
  const scopes = gov.modelScopes;
  if (scopes.length === 0) return undefined;
  if (preAdmitted.get(s) === a) {
    preAdmitted.delete(s); // counted with the request; its retries count anew
    return undefined;
  }
  const id = randomId('lim_');
  const tokens = scopes.some((sc) => sc.tpm > 0) ? attemptTokenBound(s, a) : 0;
  const verdict = ({ admission, by }: Admitted): AttemptVerdict => {
    if (!admission.ok) return { refuse: admitter.refused(admission, scopes, tokens) };
    return { end: (use) => void by.finish(id, scopes, use.tokens ?? tokens) };
  };
  const r = admitter.now(id, tokens, scopes);
  return r instanceof Promise ? r.then(verdict) : verdict(r);
}

/**
 * Leave out of the plan the attempts on models the key may not use (no credit is reserved for them), each kept in
 * the attempt log as skipped by this guard.
 */
export function prune(s: GatewayState, plan: AttemptPlan, allow: (model: string) => boolean): void {
  const keep = (list: Attempt[]) =>
    list.filter((a) => {
      if (allow(a.model.id)) return true;
      logSkipped(s, a, 'limits', errors.modelNotAllowed(a.model.id));
      return false;
    });
  plan.attempts = keep(plan.attempts);
  if (plan.contextFallback) plan.contextFallback = keep(plan.contextFallback);
}
