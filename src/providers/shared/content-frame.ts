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
  /** The run the last chunk made or joined, while the next may join it (see next). */
  private run: TemplateFrame | null = null;
  private readonly make = (text: string) => chunk(this.ctx, { content: text });

  constructor(private readonly ctx: AdapterContext) {}

  /** The content chunk of choice 0 for `text` (whose JSON string is `json`), carrying its frame. */
  chunk(text: string, json: string): ChatCompletionChunk {
    this.run = null;
    const c = this.make(text);
    if (this.head === '') this.template();
    const frame = new TemplateFrame(this.head, this.tail, text, json, c, this.make);
    withChatFrame(c, frame);
    this.run = frame;
    return c;
  }

  /**
   * The same, or null when it joins the chunk made just before (not since handed on: see endRun) as a run
   * (docs/decisions/0065-text-runs.md).
   */
  next(text: string, json: string): ChatCompletionChunk | null {
    const run = this.run;
    if (run === null) return this.chunk(text, json);
    run.add(text, json);
    return null;
  }

  /** No later chunk joins the one made last (its reader may have it). */
  endRun(): void {
    this.run = null;
  }

  private template(): void {
    const s = JSON.stringify(chunk(this.ctx, { content: '' }));
    // The only `"content":""` outside a string: a quote inside one is escaped.
    const at = s.lastIndexOf('"content":""') + '"content":'.length;
    this.head = `data: ${s.slice(0, at)}`;
    this.tail = s.slice(at + 2, -1);
  }
}

/**
 * A template-made frame, and those of the chunks that joined it (a run): their texts' JSON strings between the
 * template's head and tail. The chunk it came with is already whole (for a run, with the texts joined).
 */
class TemplateFrame implements ChatFrame {
  private texts: string[] | null = null;
  private readonly jsons: string[];
  count: number | undefined = undefined;

  constructor(
    private readonly head: string,
    private readonly tail: string,
    private readonly text: string,
    json: string,
    private readonly chunk: ChatCompletionChunk,
    private readonly make: (text: string) => ChatCompletionChunk,
  ) {
    this.jsons = [json];
  }

  add(text: string, json: string): void {
    (this.texts ??= [this.text]).push(text);
    this.count = this.jsons.push(json);
    this.chunk.choices[0].delta.content += text;
  }

  get frame(): string {
    return this.frameWith('');
  }

  frameWith(extra: string): string {
    const { head, jsons } = this;
    const end = this.tail + extra + ',"usage":null}\n\n';
    let s = '';
    for (let i = 0; i < jsons.length; i++) s += head + jsons[i] + end;
    return s;
  }

  full(): ChatCompletionChunk {
    return this.chunk;
  }

  parts(): ChatFrame[] {
    const texts = this.texts ?? [this.text];
    return texts.map((t, i) => {
      const c = this.make(t);
      const frame = new TemplateFrame(this.head, this.tail, t, this.jsons[i], c, this.make);
      withChatFrame(c, frame);
      return frame;
    });
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
