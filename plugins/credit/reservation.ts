import {
  requestTokenBound,
  type AttemptPlan,
  type ChatRequest,
  type DeploymentConfig,
  type ModelConfig,
} from '../../src/plugin';
import { costBound } from './bound';
import type { Price } from './price';

export interface PlannedReservation {
  /** What to reserve (nano-credits): the most any one attempt can cost. */
  amount: number;
  /** Per model id: the most an attempt on it can cost, the cap of its charge. */
  caps: Map<string, number>;
  /** The first attempt with an item that has no known maximum. */
  unbounded: { param: string; model: ModelConfig } | null;
}

/**
 * The reservation for every attempt the plan may make (each fallback model or `models[]`
 * entry with its own parameters and price, retries, the context-window fallback). Only the
 * attempt that answers is billed (routing switches attempts only before the first byte, and
 * a failed attempt is charged nothing), so the maximum over attempts bounds the charge.
 */
export function planReservation(
  plan: AttemptPlan,
  options: Record<string, unknown>,
  priceOf: (m: ModelConfig, d?: DeploymentConfig) => Price,
): PlannedReservation {
  const caps = new Map<string, number>();
  const seen = new Map<ChatRequest, Set<string>>();
  let unbounded: PlannedReservation['unbounded'] = null;
  for (const a of [...plan.attempts, ...(plan.contextFallback ?? [])]) {
    // Retries repeat a request on the same model and deployment: bound each once.
    const key = `${a.model.id}\u0000${a.provider.name}\u0000${a.deployment.model}`;
    const done = seen.get(a.request) ?? new Set<string>();
    if (done.has(key)) continue;
    done.add(key);
    seen.set(a.request, done);
    const b = requestTokenBound(a.request, a.model, a.provider.type, options, a);
    // Remember the first such item, or one on a model whose operator chose to refuse it.
    const refuses = (m: ModelConfig) => m.credit_bound?.unbounded_items === 'refuse';
    if (b.unbounded !== null && (unbounded === null || (refuses(a.model) && !refuses(unbounded.model))))
      unbounded = { param: b.unbounded, model: a.model };
    const cost = costBound(priceOf(a.model, a.deployment), b);
    caps.set(a.model.id, Math.max(caps.get(a.model.id) ?? 0, cost));
  }
  return { amount: Math.max(0, ...caps.values()), caps, unbounded };
}
