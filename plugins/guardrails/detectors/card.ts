/**
 * @module
 * Payment card numbers: 13 to 19 digits, optionally in groups split by one space or dash, that pass the Luhn check
 * and start as a card network's numbers do (Visa, Mastercard, American Express, Discover, JCB, Diners, UnionPay,
 * Maestro). An order number of 16 digits fails Luhn nine times in ten and the prefix check most of the rest.
 */
import { digitsOf, luhnValid, regexDetector } from './match';

const CANDIDATE = /(?<![\d.-])\d{4}(?:[ -]?\d{2,6}){2,4}(?:[ -]?\d{1,4})?(?![\d]|[.-]\d)/g;
const NETWORK = /^(?:4|5[1-5]|2[2-7]|3[47]|3[068]|35|6(?:011|5|4[4-9]|2)|50|5[6-9])/;

function isCard(v: string): boolean {
  const d = digitsOf(v);
  if (d.length < 13 || d.length > 19 || !NETWORK.test(d)) return false;
  // Mixed separators (`1234 5678-9012`) are not how a card is written.
  if (v.includes(' ') && v.includes('-')) return false;
  return luhnValid(d);
}

export const card = regexDetector('payment_card', 'CARD', CANDIDATE, isCard);
