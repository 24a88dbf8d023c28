import type { ChatCompletionChunk } from '../../types/openai';
import { withChatFrame, type ChatFrame } from '../same-wire';
import type { AdapterContext } from '../types';
import { chunk } from './index';

/**
 * A translated stream's content chunks, serialised from a template
 * (docs/decisions/0036-translated-stream-fast-path.md):
 * every content chunk of a stream is the same JSON but for its text, so the text before and after it is made once per
 * stream, by JSON.stringify of the very chunk the translator makes, and each chunk's frame is that prefix, the text as
 * a JSON string and that suffix. The writer writes the frame when every observer is read-only, exactly the bytes it
 * would have serialised itself (the stamps, then `"usage":null`, at the end).
 */
export class ContentFrames {
  private head = '';
  private tail = '';

  constructor(private readonly ctx: AdapterContext) {}

  /** The content chunk of choice 0 for `text` (whose JSON string is `json`), carrying its frame. */
  chunk(text: string, json: string): ChatCompletionChunk {
    const c = chunk(this.ctx, { content: text });
    if (this.head === '') this.template();
    withChatFrame(c, new TemplateFrame(this.head + json + this.tail, c));
    return c;
  }

  private template(): void {
    const s = JSON.stringify(chunk(this.ctx, { content: '' }));
    // The only `"content":""` outside a string: a quote inside one is escaped.
    const at = s.lastIndexOf('"content":""') + '"content":'.length;
    this.head = `data: ${s.slice(0, at)}`;
    this.tail = s.slice(at + 2, -1);
  }
}

/** A template-made frame; the chunk it came with is already whole. */
class TemplateFrame implements ChatFrame {
  constructor(
    /** The frame without the members the writer adds and the closing `}\n\n`. */
    private readonly body: string,
    private readonly chunk: ChatCompletionChunk,
  ) {}

  get frame(): string {
    return this.body + ',"usage":null}\n\n';
  }

  frameWith(extra: string): string {
    return this.body + extra + ',"usage":null}\n\n';
  }

  full(): ChatCompletionChunk {
    return this.chunk;
  }
}

/**
 * Whether no character of `raw` makes a JSON string's body differ from its text (an escape, a quote, a control
 * character, a surrogate JSON.stringify may escape) or makes it no body at all.
 */
function plain(raw: string): boolean {
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (c < 32 || c === 34 || c === 92 || (c >= 0xd800 && c <= 0xdfff)) return false;
  }
  return true;
}

/**
 * Whether `raw` (what lies between a string's quotes in an upstream event) is one valid JSON string body; if so its
 * text and the text as JSON.stringify writes it are in `out`. When it is not, the event's full parse decides.
 */
export function textOfBody(raw: string, out: JsonText): boolean {
  if (plain(raw)) {
    out.text = raw;
    out.json = `"${raw}"`;
    return true;
  }
  try {
    out.text = JSON.parse(`"${raw}"`) as string;
  } catch {
    return false;
  }
  if (typeof out.text !== 'string') return false;
  out.json = JSON.stringify(out.text);
  return true;
}

/** A text and its JSON string (reused by one stream: one event is read at a time). */
export interface JsonText {
  text: string;
  json: string;
}

/** The index of the quote that closes the JSON string whose body starts at `from` in `d`; -1 if none. */
export function stringEnd(d: string, from: number): number {
  let q = d.indexOf('"', from);
  while (q > from && d.charCodeAt(q - 1) === 92) {
    let slashes = 1;
    while (q - 1 - slashes >= from && d.charCodeAt(q - 1 - slashes) === 92) slashes++;
    if (slashes % 2 === 0) break;
    q = d.indexOf('"', q + 1);
  }
  return q;
}
