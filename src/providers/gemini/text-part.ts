import { isRecord } from '../shared';
import { stringEnd, textOfBody, type JsonText } from '../shared/content-frame';

/**
 * Gemini's text event read without a full parse (docs/decisions/0036-translated-stream-fast-path.md): most events of
 * a stream are one candidate with one text part, `{"candidates":[{"content":{"parts":[{"text":"..."}],"role":"model"}
 * (,"index":0)}]` and then top-level members (`usageMetadata`, `modelVersion`, `responseId`) that repeat from event to
 * event or change little. The text is read in place; those members are parsed on their own, once for as long as they
 * repeat. Anything else (a finish reason, a thought, a call, another candidate or part, an error, whitespace, another
 * order) goes through the full parse, as before.
 */
const HEAD = '{"candidates":[{"content":{"parts":[{"text":"';
const CANDIDATE_END = '"}],"role":"model"},"index":0}]';
const CANDIDATE_END_NO_INDEX = '"}],"role":"model"}}]';

export class TextPartReader {
  /** The text of the last event read. */
  readonly text: JsonText = { text: '', json: '' };
  /** Its top-level `usageMetadata`, if it had one. */
  usageMetadata: unknown = undefined;
  /** The members after `candidates` last seen (with the closing brace), and whether they allow this reading. */
  private tail = '';
  private tailOk = false;

  /** Whether `d` is a text event of the common shape with text in it; the text and usage in this reader. */
  read(d: string): boolean {
    // Slices compared, not startsWith: on the sliced strings a parser makes, V8 (node 20) is far slower.
    if (d.slice(0, HEAD.length) !== HEAD) return false;
    const q = stringEnd(d, HEAD.length);
    if (q < 0) return false;
    let i = q + CANDIDATE_END.length;
    if (d.slice(q, i) !== CANDIDATE_END) {
      i = q + CANDIDATE_END_NO_INDEX.length;
      if (d.slice(q, i) !== CANDIDATE_END_NO_INDEX) return false;
    }
    // An empty text makes no chunk: left to the full parse too.
    return q > HEAD.length && this.members(d.slice(i)) && textOfBody(d.slice(HEAD.length, q), this.text);
  }

  /** Top-level members that change nothing but the usage: no other candidates, no error, no prompt feedback. */
  private members(tail: string): boolean {
    if (tail === this.tail) return this.tailOk;
    this.tail = tail;
    this.tailOk = false;
    this.usageMetadata = undefined;
    if (tail === '}') return (this.tailOk = true);
    if (tail.charCodeAt(0) !== 44) return false;
    let t: unknown;
    try {
      t = JSON.parse(`{${tail.slice(1)}`);
    } catch {
      return false;
    }
    if (!isRecord(t) || 'candidates' in t || 'error' in t || 'promptFeedback' in t) return false;
    this.usageMetadata = t.usageMetadata;
    return (this.tailOk = true);
  }
}
