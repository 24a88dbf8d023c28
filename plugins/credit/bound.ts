import { worstCase, type TokenBound } from '../../src/plugin';
import { billedPrice, maxPromptPrice, type Price } from './price';

/**
 * The most one attempt can cost at `price` (nano-credits): the request fee plus the worst
 * prompt/output split, each token at the dearest price it can be billed at (a prompt token
 * may be a cache write, an output token a reasoning token).
 */
export function costBound(base: Price, b: TokenBound): number {
  const price = b.features ? billedPrice(base, b.features) : base;
  const output = Math.max(
    price.completion,
    price.reasoning ?? 0,
    price.audioCompletion ?? 0,
    price.rejectedPrediction ?? 0,
  );
  const prompt = Math.max(maxPromptPrice(price, b.hourWrites), price.audioPrompt ?? 0);
  return Math.min(Number.MAX_SAFE_INTEGER, price.request + worstCase(b, prompt, output));
}
