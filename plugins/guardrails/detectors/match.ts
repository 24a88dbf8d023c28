/**
 * @module
 * What every built-in detector is made of: a global regex run over a text, each candidate kept when a check (a
 * checksum, a range) accepts it. The regex is compiled once; `lastIndex` is reset on every call, so one detector
 * serves every request.
 */
import type { Detector, DetectorMatch } from '../../../src/plugin';

/** A candidate's text and where it is; `group` is the capture group that holds the value, when there is one. */
export type Accept = (value: string, m: RegExpExecArray) => boolean | DetectorMatch;

/** Every match of `re` (flag `g`) that `accept` keeps; `accept` may narrow the span by returning one. */
export function matchAll(re: RegExp, text: string, accept?: Accept): DetectorMatch[] {
  const out: DetectorMatch[] = [];
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (m[0].length === 0) {
      re.lastIndex++;
      continue;
    }
    const verdict = accept ? accept(m[0], m) : true;
    if (verdict === true) out.push({ start: m.index, end: m.index + m[0].length });
    else if (verdict !== false) {
      out.push(verdict);
      // A narrowed match gives back what the candidate swallowed after it (the next value may start there).
      re.lastIndex = verdict.end;
    }
  }
  return out;
}

/** A detector from a regex and an optional check. */
export function regexDetector(
  id: string,
  label: string,
  re: RegExp,
  accept?: Accept,
  keywords?: readonly string[],
): Detector {
  return { id, label, keywords, find: (text) => matchAll(re, text, accept) };
}

/** The digits of a string. */
export function digitsOf(s: string): string {
  return s.replace(/\D/g, '');
}

/** The Luhn check (payment cards, Canadian SINs). */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}
