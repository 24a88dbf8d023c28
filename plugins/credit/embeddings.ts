import type { AttemptPlan, GatewayState } from '../../src/pipeline/state';
import { fromNano } from '../../src/store/money';
import type { EmbeddingsResponse } from '../../src/types/embeddings';
import { inputTokenBound } from '../../src/api/embeddings/encode';
import { maxPromptPrice, usageCost, type Price } from './price';
import type { PlannedReservation } from './reservation';
import type { ModelConfig } from '../../src/config/types';

/** The most an embeddings request can cost: its inputs' token bound (a token is at least one UTF-8 byte), no output. */
export function embeddingsMaxCost(price: Price, s: GatewayState): number {
  return price.request + (s.embeddings ? inputTokenBound(s.embeddings) : 0) * maxPromptPrice(price);
}

/** The reservation for an embeddings request: the most any model of its plan can charge for its inputs. */
export function embeddingsReservation(plan: AttemptPlan, s: GatewayState, priceOf: (m: ModelConfig) => Price): PlannedReservation {
  const caps = new Map<string, number>();
  for (const a of plan.attempts) caps.set(a.model.id, Math.max(caps.get(a.model.id) ?? 0, embeddingsMaxCost(priceOf(a.model), s)));
  if (caps.size === 0) caps.set(s.model.id, embeddingsMaxCost(priceOf(s.model), s));
  return { amount: Math.max(...caps.values()), caps, unbounded: null };
}

/** Settle an embeddings answer to the provider's count, capped at the reservation; its usage gets `cost`. */
export function embeddingsCharge(body: EmbeddingsResponse, price: Price, reserved: number) {
  const usage = {
    prompt_tokens: body.usage.prompt_tokens,
    completion_tokens: 0,
    total_tokens: body.usage.total_tokens,
  };
  const cost = Math.min(usageCost(price, usage), reserved);
  body.usage.cost = fromNano(cost);
  return {
    usage,
    cost,
    finishReason: null,
    streamed: false,
    cancelled: false,
    status: 'completed' as const,
    errorCode: null,
    firstContentAt: null,
  };
}
