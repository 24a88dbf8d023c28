import type { GatewayState } from '../../src/pipeline/state';
import { fromNano } from '../../src/store/money';
import type { EmbeddingsResponse } from '../../src/types/embeddings';
import { inputTokenBound } from '../../src/api/embeddings/encode';
import { usageCost, type Price } from './price';

/** The most an embeddings request can cost: its inputs' token bound (a token is at least one UTF-8 byte), no output. */
export function embeddingsMaxCost(price: Price, s: GatewayState): number {
  return price.request + (s.embeddings ? inputTokenBound(s.embeddings) : 0) * price.prompt;
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
