import type { UpstreamEvent } from '../providers/types';
import { SizeLimitError } from './limits';

/**
 * The events of a stream read taken in one pass, without the line splitter: from `i`, an event start, each event of
 * the form nearly every upstream writes, an optional `event:` line, one `data:` line and a blank line (LF or CRLF line
 * ends), goes to `out` as the line splitter and the parser would have made it. Returns where it stopped: the end of
 * `text`, or the start of the first event of another form or not yet complete, which the caller gives to the line
 * splitter (the general parser) instead. Lines are bounded as there.
 */
export function scanEvents(text: string, i: number, maxBytes: number, out: UpstreamEvent[]): number {
  const n = text.length;
  let cr = text.indexOf('\r', i);
  for (;;) {
    if (i >= n) return i;
    let p = i;
    let event: string | undefined;
    if (text.charCodeAt(p) === 101 /* e */) {
      const lf = text.indexOf('\n', p);
      if (lf < 0 || !isField(text, p, 'event:')) return i;
      if (cr !== -1 && cr < lf) {
        if (cr !== lf - 1) return i;
        cr = text.indexOf('\r', lf);
      }
      const end = text.charCodeAt(lf - 1) === 13 ? lf - 1 : lf;
      if (end - p > maxBytes) throw new SizeLimitError('a stream line', maxBytes);
      event = text.slice(valueStart(text, p + 6), end);
      p = lf + 1;
    }
    const lf = text.indexOf('\n', p);
    if (lf < 0 || !isField(text, p, 'data:')) return i;
    if (cr !== -1 && cr < lf) {
      if (cr !== lf - 1) return i;
      cr = text.indexOf('\r', lf);
    }
    const end = text.charCodeAt(lf - 1) === 13 ? lf - 1 : lf;
    // The blank line that ends the event: LF or CRLF.
    let next = lf + 1;
    if (next < n && text.charCodeAt(next) === 13) {
      next++;
      cr = text.indexOf('\r', next);
    }
    if (next >= n || text.charCodeAt(next) !== 10) return i;
    // One data line: the event's data is shorter than its line, so the line's bound is the event's too.
    if (end - p > maxBytes) throw new SizeLimitError('a stream line', maxBytes);
    const ev: UpstreamEvent = { data: text.slice(valueStart(text, p + 5), end) };
    if (event !== undefined) ev.event = event;
    out.push(ev);
    i = next + 1;
  }
}

/** Whether the line at `p` is the field `name` (with its colon): compared by character, no slice. */
function isField(text: string, p: number, name: string): boolean {
  for (let k = 0; k < name.length; k++) if (text.charCodeAt(p + k) !== name.charCodeAt(k)) return false;
  return true;
}

/** A field's value starts after its colon and one space, if there is one. */
function valueStart(text: string, afterColon: number): number {
  return text.charCodeAt(afterColon) === 32 ? afterColon + 1 : afterColon;
}

/**
 * The index just after the first blank line at or after `i` (an LF, or a CRLF, right after a line's LF), where an
 * event surely ends; -1 if none (or only CR-ended ones, left to the line splitter).
 */
export function afterBlankLine(text: string, i: number): number {
  const a = text.indexOf('\n\n', i);
  const b = text.indexOf('\n\r\n', i);
  if (a < 0) return b < 0 ? -1 : b + 3;
  return b < 0 || a < b ? a + 2 : b + 3;
}
