/**
 * Money in the store is an integer count of nano-credits (1e-9 credit): sums are exact,
 * and a JS number holds up to 9e15 nano-credits (9 million credits) exactly.
 * The API speaks credits as decimal numbers; conversion happens only at the edge.
 */
export const NANO = 1_000_000_000;

export function toNano(credits: number): number {
  return Math.round(credits * NANO);
}

export function fromNano(nano: number): number {
  return nano / NANO;
}

/**
 * The most nano-credits an amount or a balance may be: the largest integer a JS number holds exactly (2^53 - 1,
 * 9,007,199.254740991 credits). Past it a sum is no longer exact (a nano-credit added is lost), so every amount the
 * API or the CLI takes, and every balance it would make, is held from its lower bound to this.
 */
export const MAX_NANO = Number.MAX_SAFE_INTEGER;
/** MAX_NANO in credits, for messages. */
export const MAX_CREDITS_TEXT = '9007199.254740991';

/** Whether `nano` is a whole number of nano-credits from `min` to MAX_NANO. */
export function nanoInRange(nano: number, min = 0): boolean {
  return Number.isSafeInteger(nano) && nano >= min && nano <= MAX_NANO;
}

/** `credits` in nano-credits when they are from 0 (from -MAX_NANO when `signed`) to MAX_NANO; otherwise null. */
export function nanoOrNull(credits: number, signed = false): number | null {
  if (!Number.isFinite(credits)) return null;
  const nano = toNano(credits);
  return nanoInRange(signed ? Math.abs(nano) : nano) ? nano : null;
}

/**
 * Credit added to (or removed from) an account would take its credits outside 0 to MAX_NANO: nothing was written.
 * `credits` is what the account holds, `nano` what was asked.
 */
export class CreditsOutOfRange extends Error {
  constructor(
    readonly credits: number,
    readonly nano: number,
  ) {
    super(
      `this would make the account's credits ${fromNano(credits + nano)}: ` +
        `an account holds from 0 to ${MAX_CREDITS_TEXT} credits (it holds ${fromNano(credits)})`,
    );
  }
}

/** pg returns BIGINT as a string; SQLite as a number. */
export function num(v: unknown): number {
  return typeof v === 'number' ? v : v === null || v === undefined ? 0 : Number(v);
}

export function numOrNull(v: unknown): number | null {
  return v === null || v === undefined ? null : num(v);
}
