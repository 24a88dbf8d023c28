/**
 * @module
 * Zero-completion insurance, as OpenRouter defines it: an answer with no output tokens and a blank or error finish is
 * not charged. It is kept from being a way to get answers free: the gateway's own look at the answer must find no
 * output either (no text, no tool call, no first content in a stream), whatever the upstream's usage says.
 */
import type { Charge } from './usage-check';

/** Whether the finish reason is blank (none, empty) or an error. */
const blankOrError = (finish: string | null | undefined) => !finish || finish === 'error';

/** Whether an answer whose charge is `charge` is insured: no output by any count, and a blank or error finish. */
export function insured(charge: Charge | null, finish: string | null | undefined, producedOutput: boolean): boolean {
  if (producedOutput || !blankOrError(finish)) return false;
  return (charge?.usage.completion_tokens ?? 0) === 0;
}

/** The same charge, with nothing to pay: the usage is kept for the record, the cost and any overrun are dropped. */
export function waived(charge: Charge): Charge {
  return { usage: charge.usage, cost: 0, overrun: 0, reason: null };
}
