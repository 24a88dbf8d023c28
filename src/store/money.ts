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

/** pg returns BIGINT as a string; SQLite as a number. */
export function num(v: unknown): number {
  return typeof v === 'number' ? v : v === null || v === undefined ? 0 : Number(v);
}

export function numOrNull(v: unknown): number | null {
  return v === null || v === undefined ? null : num(v);
}
