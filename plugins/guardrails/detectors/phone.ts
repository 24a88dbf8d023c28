/**
 * @module
 * Phone numbers, written as people write them: international (`+` and a country code, 8 to 15 digits, E.164), North
 * American (`(415) 555-0132`, `415-555-0132`, `415.555.0132`, an area code and exchange that start 2-9), and national
 * numbers with a trunk 0 in groups (`020 7946 0958`, `06 12 34 56 78`). Runs of digits without separators or a `+`
 * are not taken (order numbers, timestamps), nor dates, versions or dotted quads.
 */
import { digitsOf, regexDetector } from './match';

// Not right after an IBAN's leading groups (`NL58 LFQL 0907 2948 05` is an account, not a number to call).
const CANDIDATE =
  /(?<![\w+.:/-])(?<![A-Z]{2}\d{2}(?: [A-Z0-9]{4})* )(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{1,14}(?:[ .-]\d{1,8}){0,5}(?![\w]|[.:/-]\d)/g;
const NANP = /^(?:\+?1[ .-]?)?(?:\([2-9]\d{2}\)[ .-]?|[2-9]\d{2}[ .-])[2-9]\d{2}[ .-]\d{4}$/;
const TRUNK = /^0\d{1,4}(?:[ .-]\d{2,4}){2,4}$|^\(0\d{1,4}\)[ .-]?\d{3,4}[ .-]?\d{3,4}$|^0\d{2,4}[ /-]\d{6,8}$/;
const DATE = /^\d{4}[-./]\d{1,2}[-./]\d{1,2}$|^\d{1,2}[-./]\d{1,2}[-./]\d{2,4}$/;

function isPhone(v: string): boolean {
  const n = digitsOf(v).length;
  if (DATE.test(v)) return false;
  if (v.startsWith('+')) return n >= 8 && n <= 15;
  // Dots alone are versions or addresses unless the shape is North American.
  if (NANP.test(v)) return true;
  return n >= 10 && n <= 12 && TRUNK.test(v) && !/^\d+(?:\.\d+)+$/.test(v);
}

export const phone = regexDetector('phone', 'PHONE', CANDIDATE, isPhone);
