import type { UpstreamEvent } from '../providers/types';
import { DEFAULT_MAX_EVENT_BYTES, LineSplitter, SizeLimitError } from './limits';
import { afterBlankLine, scanEvents } from './sse-scan';

/**
 * Where the pieces of one read are put together before they are decoded (pushPieces): one buffer for every parser,
 * since a parse is synchronous, kept up to the size of a large read.
 */
let scratch = Buffer.allocUnsafe(0);
const MAX_SCRATCH = 1024 * 1024;

/**
 * What both parsers share: the bytes fed are split into lines (a line longer than `maxBytes`
 * throws a SizeLimitError), each line goes to `line`, and the events it makes are collected
 * into the array that `push` or `end` was given and returns.
 */
abstract class LineEventParser implements EventParser {
  protected readonly lines: LineSplitter;
  protected out: UpstreamEvent[] = [];
  protected readonly onLine = (line: string) => this.line(line);

  constructor(maxBytes: number) {
    this.lines = new LineSplitter(maxBytes, 'a stream line');
  }

  push(chunk: Uint8Array, out: UpstreamEvent[] = []): UpstreamEvent[] {
    this.out = out;
    this.lines.push(chunk, this.onLine);
    return out;
  }

  /** The pieces of one read as one push: copied into a buffer kept for it (the decoder keeps none of its input). */
  pushPieces(pieces: Uint8Array[], out: UpstreamEvent[] = []): UpstreamEvent[] {
    if (pieces.length === 1) return this.push(pieces[0], out);
    let n = 0;
    for (let i = 0; i < pieces.length; i++) n += pieces[i].length;
    if (n > MAX_SCRATCH) return this.push(Buffer.concat(pieces, n), out);
    if (n > scratch.length) scratch = Buffer.allocUnsafe(Math.max(n, 64 * 1024));
    let at = 0;
    for (let i = 0; i < pieces.length; i++) {
      scratch.set(pieces[i], at);
      at += pieces[i].length;
    }
    return this.push(scratch.subarray(0, n), out);
  }

  end(out: UpstreamEvent[] = []): UpstreamEvent[] {
    this.out = out;
    this.lines.end(this.onLine);
    this.flush();
    return out;
  }

  protected abstract line(line: string): void;

  /** Called at the end of the stream, after its last line. */
  protected flush(): void {}
}

/**
 * Incremental parser for text/event-stream (WHATWG HTML, "event stream interpretation"):
 * `data:` lines are joined with \n, an empty line dispatches, `:` lines are comments,
 * CR, LF and CRLF all end a line. Linear in the bytes fed; a line or an event's data
 * longer than `maxBytes` throws a SizeLimitError.
 */
export class SseParser extends LineEventParser {
  private data: string[] = [];
  private dataBytes = 0;
  private event: string | undefined;

  constructor(private readonly maxBytes = DEFAULT_MAX_EVENT_BYTES) {
    super(maxBytes);
  }

  /**
   * Events of the common form (./sse-scan.ts) are taken from the read in one pass whenever no line or event is open;
   * anything else goes through the line splitter up to the next blank line, after which the pass resumes.
   */
  override push(chunk: Uint8Array, out: UpstreamEvent[] = []): UpstreamEvent[] {
    this.out = out;
    const text = this.lines.decode(chunk);
    const n = text.length;
    let i = 0;
    while (i < n) {
      if (this.data.length === 0 && this.event === undefined && this.lines.idle()) {
        i = scanEvents(text, i, this.maxBytes, out);
        if (i >= n) break;
      }
      const b = afterBlankLine(text, i);
      if (b < 0) {
        this.lines.feed(i === 0 ? text : text.slice(i), this.onLine);
        break;
      }
      this.lines.feed(text.slice(i, b), this.onLine);
      i = b;
    }
    return out;
  }

  /** The end of the stream dispatches an event whose blank line never came. */
  protected override flush(): void {
    this.dispatch();
  }

  protected line(line: string): void {
    if (line.length === 0) return this.dispatch();
    if (line.charCodeAt(0) === 58 /* : */) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') {
      this.dataBytes += value.length + 1;
      if (this.dataBytes > this.maxBytes) throw new SizeLimitError('a stream event', this.maxBytes);
      this.data.push(value);
    } else if (field === 'event') this.event = value;
  }

  private dispatch(): void {
    if (this.data.length > 0) {
      const ev: UpstreamEvent = { data: this.data.join('\n') };
      if (this.event !== undefined) ev.event = this.event;
      this.out.push(ev);
    }
    this.data = [];
    this.dataBytes = 0;
    this.event = undefined;
  }
}

/** Newline-delimited JSON (Ollama): every non-empty line is one event; a line longer than `maxBytes` throws. */
export class NdjsonParser extends LineEventParser {
  constructor(maxBytes = DEFAULT_MAX_EVENT_BYTES) {
    super(maxBytes);
  }

  protected line(raw: string): void {
    const line = raw.trim();
    if (line) this.out.push({ data: line });
  }
}

export interface EventParser {
  push(chunk: Uint8Array, out?: UpstreamEvent[]): UpstreamEvent[];
  /** The same as a push of the pieces joined (the pieces of one socket read), where the parser can do better. */
  pushPieces?(pieces: Uint8Array[], out?: UpstreamEvent[]): UpstreamEvent[];
  end(out?: UpstreamEvent[]): UpstreamEvent[];
}
