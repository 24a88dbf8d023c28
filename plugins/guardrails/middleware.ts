/**
 * @module
 * The guardrails plugin's step on the chain. Before the upstream: the request's policy (none: the request passes
 * untouched), its input checks over every text (block: 400 guardrail_blocked; redact: placeholders; flag: recorded),
 * then the classifier. After: a plain answer's texts checked and restored in a copy (the stored answer keeps the
 * placeholders), a stream's through a rolling window (stream-guard.ts). Embeddings are checked on input only.
 */
import {
  errors,
  STORED_VIEW,
  type GatewayContext,
  type GatewayState,
  type Next,
  type StoredView,
} from '../../src/plugin';
import type { Classifier } from './classifier';
import type { GuardrailsMetrics } from './metrics';
import type { Policies } from './policy';
import { GuardRun } from './run';
import { StreamGuard, streamObserver } from './stream-guard';
import { inputText, rewriteCompletion, rewriteInput } from './texts';
import type { HoldRule } from './hold';

export interface GuardrailsDeps {
  policies: Policies;
  metrics: GuardrailsMetrics;
  classifier: Classifier | null;
  storeOriginals: boolean;
  /** The hold rule of a stream with output checks (its word count from the checks' phrases). */
  holdRule: (run: GuardRun) => HoldRule;
}

/** The most of a request's text the classifier reads. */
const CLASSIFIER_TEXT_MAX = 32_000;

async function classify(ctx: GatewayContext, run: GuardRun, deps: GuardrailsDeps): Promise<void> {
  const c = run.policy.classifier;
  const s = ctx.state.gateway;
  if (!c || !deps.classifier || deps.classifier.isOwn(s.model.id)) return;
  const verdict = await deps.classifier.classify(ctx, inputText(s, CLASSIFIER_TEXT_MAX));
  deps.metrics.classifier.inc({ outcome: verdict });
  if (verdict === 'unsafe') {
    if (c.action === 'block') {
      run.record('classifier', 'input', 'block', 1);
      throw errors.guardrailBlocked('classifier', 'input');
    }
    run.record('classifier', 'input', 'flag', 1);
  } else if (verdict === 'error') {
    run.record('classifier_unavailable', 'input', c.failClosed ? 'block' : 'flag', 1);
    if (c.failClosed) throw errors.guardrailUnavailable('classifier');
  }
}

function guardOutput(s: GatewayState, run: GuardRun, deps: GuardrailsDeps): void {
  const result = s.result;
  if (!result || result.kind === 'embeddings') return;
  if (run.policy.output.length === 0 && !run.redactor.restores) return;
  if (result.kind === 'completion') {
    const body = rewriteCompletion(result.body, (t) => run.answer(t));
    if (body !== result.body) s.result = { kind: 'completion', body };
    return;
  }
  const stream = result.stream;
  stream.observe(streamObserver(new StreamGuard(run, deps.holdRule(run)), (e) => stream.abort(e)));
}

export function guardrailsMiddleware(deps: GuardrailsDeps) {
  return async function guardrails(ctx: GatewayContext, next: Next): Promise<void> {
    const s = ctx.state.gateway;
    const policy = deps.policies.resolve(s);
    if (!policy) return next();
    const run = new GuardRun(policy, s, deps.metrics);
    // The guard must see and may change what is sent and answered: a Messages request is translated, not passed on.
    s.inbound = undefined;
    if (policy.input.length > 0) rewriteInput(s, (t) => run.scan(t, 'input'));
    await classify(ctx, run, deps);
    if (run.redactor.restores && !deps.storeOriginals) {
      const view: StoredView = (body) => run.redactor.storedView(body);
      s.extensions[STORED_VIEW] = view;
    }
    await next();
    if (s.operation !== 'embeddings') guardOutput(s, run, deps);
  };
}
