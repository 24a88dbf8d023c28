import type { Usage } from '../../src/plugin';
import { usageCost, type Price } from './price';

/** Largest token count taken as real: a column of 32-bit integers holds it, and no context is near it. */
export const MAX_TOKENS = 2_147_483_647;

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_TOKENS;

export interface CheckedUsage {
  /** The usage with every count a non-negative integer (a malformed count is 0 here). */
  usage: Usage;
  /** The first malformed field (negative, fractional, not a number, absurdly large), or null. */
  malformed: string | null;
}

/** Upstream usage is checked, never trusted: each count must be a non-negative integer below MAX_TOKENS. */
export function checkUsage(u: Usage): CheckedUsage {
  let malformed: string | null = null;
  const count = (v: unknown, field: string, optional: boolean): number => {
    if (isCount(v)) return v;
    if (!(optional && (v === undefined || v === null))) malformed ??= field;
    return 0;
  };
  const raw = (u && typeof u === 'object' ? u : {}) as Partial<Usage>;
  const prompt = count(raw.prompt_tokens, 'prompt_tokens', false);
  const completion = count(raw.completion_tokens, 'completion_tokens', false);
  const total = count(raw.total_tokens, 'total_tokens', true);
  const out: Usage = {
    ...raw,
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: raw.total_tokens === undefined ? prompt + completion : total,
  };
  const details = raw.prompt_tokens_details;
  if (
    details?.cached_tokens !== undefined ||
    details?.cache_write_tokens !== undefined ||
    details?.cache_write_1h_tokens !== undefined
  ) {
    out.prompt_tokens_details = { ...details };
    for (const k of ['cached_tokens', 'cache_write_tokens', 'cache_write_1h_tokens'] as const) {
      if (details[k] !== undefined)
        out.prompt_tokens_details[k] = count(details[k], `prompt_tokens_details.${k}`, true);
    }
  }
  const reasoning = raw.completion_tokens_details?.reasoning_tokens;
  if (reasoning !== undefined)
    out.completion_tokens_details = {
      ...raw.completion_tokens_details,
      reasoning_tokens: count(reasoning, 'completion_tokens_details.reasoning_tokens', true),
    };
  // Counts a billed feature is priced by (billed_features): audio tokens, rejected prediction tokens.
  for (const [k, d] of [
    ['audio_tokens', 'prompt_tokens_details'],
    ['audio_tokens', 'completion_tokens_details'],
    ['rejected_prediction_tokens', 'completion_tokens_details'],
  ] as const) {
    const v = (raw[d] as Record<string, unknown> | undefined)?.[k];
    if (v === undefined || v === null) continue;
    const checked = count(v, `${d}.${k}`, true);
    out[d] = { ...(out[d] ?? raw[d]), [k]: checked };
  }
  return { usage: out, malformed };
}

export type OverrunReason = 'usage_above_bound' | 'malformed_usage';

export interface Charge {
  usage: Usage;
  /** What the key and account are charged (nano-credits): never above the cap. */
  cost: number;
  /** What the usage would have cost beyond the cap (nano-credits); 0 when within it. */
  overrun: number;
  reason: OverrunReason | null;
}

/**
 * The charge for an answer's usage at `price`, capped at `cap` (the attempt's bound, within
 * the reservation). Usage above the cap, or malformed usage, is an overrun: the key pays the
 * cap (no credit back), the operator carries and sees the rest.
 */
export function chargeFor(price: Price, reported: Usage, cap: number): Charge {
  const { usage, malformed } = checkUsage(reported);
  if (malformed !== null) return { usage, cost: cap, overrun: 0, reason: 'malformed_usage' };
  const cost = usageCost(price, usage);
  if (Number.isSafeInteger(cost) && cost >= 0 && cost <= cap) return { usage, cost, overrun: 0, reason: null };
  const excess = Number.isFinite(cost)
    ? Math.min(Math.max(0, Math.round(cost - cap)), Number.MAX_SAFE_INTEGER)
    : Number.MAX_SAFE_INTEGER;
  return {
    usage,
    cost: cap,
    overrun: excess,
    reason: Number.isFinite(cost) && cost >= 0 ? 'usage_above_bound' : 'malformed_usage',
  };
}
