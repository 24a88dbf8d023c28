import { inputTokenBound, maxRequestTokens, type Attempt, type AttemptPlan, type GatewayState } from '../../src/plugin';

/**
 * The most tokens (prompt + completion, every choice) one attempt can use: what tokens/min reserves before the real
 * count settles it. The same bound the credit plugin reserves money for (UTF-8 bytes, framing, items, n), with the
 * attempt's own request (a fallback entry's own `max_tokens`), model and deployment; embeddings count their inputs.
 */
export function attemptTokenBound(s: GatewayState, a: Attempt): number {
  if (s.operation === 'embeddings' && s.embeddings) return inputTokenBound(s.embeddings);
  return maxRequestTokens(a.request, a.model, a.provider.type, s.options, a);
}

/** The most tokens any attempt of the plan can use: only the attempt that answers uses any. */
export function planTokenBound(s: GatewayState, plan: AttemptPlan): number {
  if (s.operation === 'embeddings' && s.embeddings) return inputTokenBound(s.embeddings);
  let most = 0;
  let prev: Attempt | undefined;
  for (const a of plan.attempts.concat(plan.contextFallback ?? [])) {
    // Retries repeat the attempt before them: bound each request, model and deployment once.
    if (prev && prev.request === a.request && prev.model === a.model && prev.deployment === a.deployment) continue;
    prev = a;
    most = Math.max(most, attemptTokenBound(s, a));
  }
  return most;
}
