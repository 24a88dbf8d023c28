/**
 * @module
 * How much of a stream's text to hold back: only what may still become a placeholder or a rule's match once the next
 * chunk comes, never the whole answer. Without output checks that is an unclosed `[LABEL_` at the end; with them, the
 * trailing word, the short groups of capitals, digits and signs before it (a phone number, a card, an IBAN in groups
 * of four), as many words more as the longest phrase a check looks for, and an opened private key block until its end.
 * Never more than `max` characters: beyond that the text goes on (a longer match in an answer may be cut).
 */

/** A group that may continue a number or an IBAN printed in groups: `+44`, `(415)`, `0044`, `DE89`, `3704`. */
const GROUP = /^[A-Z0-9()+.-]{1,6}$/;
const OPEN_PLACEHOLDER = /\[[A-Z][A-Z0-9_]*$|\[$|\[[A-Z][A-Z0-9_]*_\d*$/;
const PLACEHOLDER_MAX = 48;
const KEY_BLOCK_MAX = 8192;

export interface HoldRule {
  /** Output checks run: hold a possible match, not only a placeholder. */
  matches: boolean;
  /** Words to hold besides the trailing one (the longest phrase a check knows, less one). */
  words: number;
  max: number;
}

function openPlaceholder(buf: string): number {
  const i = buf.lastIndexOf('[');
  if (i < 0 || buf.length - i > PLACEHOLDER_MAX) return buf.length;
  return OPEN_PLACEHOLDER.test(buf.slice(i)) ? i : buf.length;
}

/**
 * Where a word ends for the hold: white space, and the signs no detector's value contains (a value may start after
 * one, never run across it), so `Hello!` leaves at once while `Hello` waits (it may become `Hello@example.com`).
 */
const BOUNDARY = new Set([
  ' ',
  '\n',
  '\t',
  '\r',
  ',',
  ';',
  '!',
  '?',
  '"',
  "'",
  '`',
  '<',
  '>',
  '{',
  '}',
  '|',
  '\\',
  '*',
  '&',
]);
const isSpace = (ch: string) => BOUNDARY.has(ch);

/**
 * The start of the trailing words worth holding: the word touching the end (it may go on), then, going back, every
 * short group (a number or an IBAN printed in groups may go on after a space) and `words` other words.
 */
function trailingWords(buf: string, words: number): number {
  let cut = buf.length;
  let i = buf.length;
  let held = 0;
  for (;;) {
    let end = i;
    while (end > 0 && isSpace(buf[end - 1])) end--;
    let start = end;
    while (start > 0 && !isSpace(buf[start - 1])) start--;
    if (start === end) return cut;
    const touchesEnd = end === buf.length;
    if (!touchesEnd && !GROUP.test(buf.slice(start, end))) {
      if (held >= words) return cut;
      held++;
    }
    cut = i = start;
  }
}

/** Where the text that can go now ends: buf[0, cut) is final, buf[cut..] waits for more. */
export function holdFrom(buf: string, rule: HoldRule): number {
  let cut = openPlaceholder(buf);
  if (rule.matches) {
    cut = Math.min(cut, trailingWords(buf, rule.words));
    const begin = buf.lastIndexOf('-----BEGIN');
    if (begin >= 0 && buf.indexOf('-----END', begin) < 0 && buf.length - begin <= KEY_BLOCK_MAX)
      cut = Math.min(cut, begin);
    else if (buf.length - cut > rule.max) cut = buf.length - rule.max;
  }
  return cut;
}
