import {
  fromNano,
  inputTokenBound,
  type AttemptPlan,
  type EmbeddingsResponse,
  type DeploymentConfig,
  type GatewayState,
  type ModelConfig,
} from '../../src/plugin';
import { maxPromptPrice, type Price } from './price';
import type { Outcome } from './record';
import { chargeFor, type Charge } from './usage-check';
import type { PlannedReservation } from './reservation';

/** The most an embeddings request can cost: its inputs' token bound (a token is at least one UTF-8 byte), no output. */
export function embeddingsMaxCost(price: Price, s: GatewayState): number {
  return price.request + (s.embeddings ? inputTokenBound(s.embeddings) : 0) * maxPromptPrice(price);
}

/** The reservation for an embeddings request: the most any model of its plan can charge for its inputs. */
export function embeddingsReservation(
  plan: AttemptPlan,
  s: GatewayState,
  priceOf: (m: ModelConfig, d?: DeploymentConfig) => Price,
): PlannedReservation {
  const caps = new Map<string, number>();
  for (const a of plan.attempts)
    caps.set(a.model.id, Math.max(caps.get(a.model.id) ?? 0, embeddingsMaxCost(priceOf(a.model, a.deployment), s)));
  if (caps.size === 0) caps.set(s.model.id, embeddingsMaxCost(priceOf(s.model), s));
  return { amount: Math.max(...caps.values()), caps, unbounded: null };
}

/**
 * Settle an embeddings answer to the provider's count, checked like chat usage (malformed or
 * above the reservation: an overrun, charged at the cap) and capped at it; the answer's usage
 * shows the checked count and `cost`.
 */
export function embeddingsCharge(
  body: EmbeddingsResponse,
  price: Price,
  cap: number,
): { charge: Charge; outcome: Outcome } {
  const charge = chargeFor(
    price,
    { prompt_tokens: body.usage.prompt_tokens, completion_tokens: 0, total_tokens: body.usage.total_tokens },
    cap,
  );
  body.usage.prompt_tokens = charge.usage.prompt_tokens;
  body.usage.total_tokens = charge.usage.total_tokens;
  body.usage.cost = fromNano(charge.cost);
  const outcome: Outcome = {
    usage: charge.usage,
    cost: charge.cost,
    finishReason: null,
    streamed: false,
    cancelled: false,
    status: 'completed',
    errorCode: null,
    firstContentAt: null,
  };
  return { charge, outcome };
}
