/**
 * @module
 * IBANs: a country code, two check digits and the country's length of letters and digits (printed in groups of four
 * or not), accepted when the length is the country's and the ISO 13616 mod-97 check gives 1.
 */
import { regexDetector } from './match';

/** Lengths of the IBANs of the countries that issue them (SWIFT registry), the ones a text is likely to hold. */
const LENGTH: Record<string, number> = {
  AD: 24,
  AE: 23,
  AT: 20,
  AZ: 28,
  BA: 20,
  BE: 16,
  BG: 22,
  BH: 22,
  BR: 29,
  CH: 21,
  CY: 28,
  CZ: 24,
  DE: 22,
  DK: 18,
  EE: 20,
  ES: 24,
  FI: 18,
  FO: 18,
  FR: 27,
  GB: 22,
  GE: 22,
  GI: 23,
  GL: 18,
  GR: 27,
  HR: 21,
  HU: 28,
  IE: 22,
  IL: 23,
  IS: 26,
  IT: 27,
  JO: 30,
  KW: 30,
  KZ: 20,
  LB: 28,
  LI: 21,
  LT: 20,
  LU: 20,
  LV: 21,
  MC: 27,
  MD: 24,
  ME: 22,
  MK: 19,
  MT: 31,
  MU: 30,
  NL: 18,
  NO: 15,
  PK: 24,
  PL: 28,
  PS: 29,
  PT: 25,
  QA: 29,
  RO: 24,
  RS: 22,
  SA: 24,
  SE: 24,
  SI: 19,
  SK: 24,
  SM: 27,
  TN: 24,
  TR: 26,
  UA: 29,
  VG: 24,
  XK: 20,
};

const CANDIDATE = /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{1,4}){3,8}/g;

/** ISO 7064 mod 97-10 over the rearranged IBAN, in chunks (no BigInt). */
export function ibanChecksumValid(iban: string): boolean {
  const moved = iban.slice(4) + iban.slice(0, 4);
  let rest = 0;
  for (const ch of moved) {
    const c = ch.charCodeAt(0);
    const v = c >= 65 ? c - 55 : c - 48;
    rest = v > 9 ? (rest * 100 + v) % 97 : (rest * 10 + v) % 97;
  }
  return rest === 1;
}

export const iban = regexDetector('iban', 'IBAN', CANDIDATE, (v, m) => {
  const want = LENGTH[v.slice(0, 2)];
  if (want === undefined) return false;
  // Take exactly the country's length of characters (a following word of capitals may have been swallowed).
  let n = 0;
  let end = 0;
  while (end < v.length && n < want) if (v[end++] !== ' ') n++;
  if (n < want) return false;
  const next = v[end];
  if (next !== undefined && next !== ' ') return false;
  const compact = v.slice(0, end).replace(/ /g, '');
  return ibanChecksumValid(compact) ? { start: m.index, end: m.index + end } : false;
});
