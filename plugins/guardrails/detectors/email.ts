/**
 * @module
 * E-mail addresses: a local part, `@`, and a domain with a top-level label of letters. Not preceded by a character
 * that could belong to the local part (so the whole address is taken), and not an `@mention` or `user@host` without
 * a dot in the domain. Found from each `@` (indexOf), not by running the pattern from every word: a regex that
 * starts with the local part tries every position of a text and costs ~10x more on prose.
 */
import type { Detector, DetectorMatch } from '../../../src/plugin';

/** The address from its first character on (sticky: run at the start the scan found). */
const ADDRESS =
  /[A-Za-z0-9](?:[A-Za-z0-9._%+-]{0,62}[A-Za-z0-9_%+-])?@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![\w-])/y;
const LOCAL = /[A-Za-z0-9._%+-]/;

function find(text: string): DetectorMatch[] {
  const out: DetectorMatch[] = [];
  let after = 0;
  for (let at = text.indexOf('@'); at > 0; at = text.indexOf('@', at + 1)) {
    if (at < after) continue;
    let start = at;
    while (start > 0 && LOCAL.test(text[start - 1])) start--;
    // The pattern's lookbehind: the run of local-part characters is the address's whole local part.
    if (at - start > 64 || start === at) continue;
    ADDRESS.lastIndex = start;
    const m = ADDRESS.exec(text);
    if (!m || m[0].includes('..')) continue;
    out.push({ start, end: start + m[0].length });
    after = start + m[0].length;
  }
  return out;
}

export const email: Detector = { id: 'email', label: 'EMAIL', keywords: ['@'], find };
