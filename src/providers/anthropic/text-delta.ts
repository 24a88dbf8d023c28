import { textOfBody, type JsonText } from '../shared/content-frame';

/**
 * Anthropic's text delta read without a parse (docs/decisions/0036-translated-stream-fast-path.md): most events of a
 * stream are `{"type":"content_block_delta","index":N,"delta":{"type":"text_delta","text":"..."}}` byte for byte,
 * compact, in that order. Only that shape is read here; anything else (another delta, whitespace, another key or
 * order, an invalid string) goes through the full parse, as before.
 */
const HEAD = '{"type":"content_block_delta","index":';
const MID = ',"delta":{"type":"text_delta","text":"';
const END = '"}}';

/** Whether `d` is a text delta of the common shape; its text in `out`. */
export function readTextDelta(d: string, out: JsonText): boolean {
  const n = d.length;
  // Slices compared, not startsWith/endsWith: on the sliced strings a parser makes, V8 (node 20) is far slower.
  if (n < HEAD.length + 1 + MID.length + END.length || d.slice(0, HEAD.length) !== HEAD) return false;
  if (d.slice(n - END.length) !== END) return false;
  let i = HEAD.length;
  // The block's index: a JSON integer (no sign, no leading zero); a text delta does not use it.
  for (let c = d.charCodeAt(i); c >= 48 && c <= 57; c = d.charCodeAt(++i));
  if (i === HEAD.length || (i - HEAD.length > 1 && d.charCodeAt(HEAD.length) === 48)) return false;
  if (d.slice(i, i + MID.length) !== MID) return false;
  const from = i + MID.length;
  return from <= n - END.length && textOfBody(d.slice(from, n - END.length), out);
}
