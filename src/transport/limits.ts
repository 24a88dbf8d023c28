import { StringDecoder } from 'node:string_decoder';

/** The default bound on one stream line or frame, bytes (the routing plugin's `max_event_bytes`). */
export const DEFAULT_MAX_EVENT_BYTES = 4 * 1024 * 1024;

/** Thrown by a parser or body reader when an upstream sends more than it may; routing maps it to a 502. */
export class SizeLimitError extends Error {
  constructor(
    readonly what: string,
    readonly limit: number,
  ) {
    super(`${what} is larger than ${limit} bytes`);
    this.name = 'SizeLimitError';
  }
}

/**
 * Text split into lines (CR, LF and CRLF all end one), fed in chunks, in linear time: the
 * part of a line not yet ended is kept as a list of pieces and joined once, when it ends.
 * A line longer than `maxBytes` (counted in UTF-16 units, which never undercounts ASCII
 * framing) throws a SizeLimitError before more of it is kept.
 */
export class LineSplitter {
  /**
   * node's StringDecoder, not TextDecoder: the same UTF-8 (U+FFFD for what is invalid, a character split between
   * chunks kept for the next), ~5x faster a read (TextDecoder's streaming decode goes through ICU).
   */
  private readonly decoder = new StringDecoder('utf8');
  /** A byte-order mark opening the stream is dropped (the event-stream format says so; TextDecoder did too). */
  private first = true;
  private pieces: string[] = [];
  private pending = 0;
  /** The previous chunk ended with CR: a LF starting this one belongs to it. */
  private skipLf = false;

  constructor(
    private readonly maxBytes: number,
    private readonly what: string,
  ) {}

  push(chunk: Uint8Array, onLine: (line: string) => void): void {
    this.feed(this.decode(chunk), onLine);
  }

  /** Flush the decoder and a last line without an end. */
  end(onLine: (line: string) => void): void {
    this.feed(this.text(this.decoder.end()), onLine);
    if (this.pending > 0 || this.pieces.length > 0) onLine(this.take(''));
  }

  /** The text of the next bytes (a character split between chunks waits for the rest), for `feed`. */
  decode(chunk: Uint8Array): string {
    return this.text(this.decoder.write(chunk));
  }

  /** Whether no line is open: the text fed so far ended with a line's end, so the next text starts a line. */
  idle(): boolean {
    return this.pending === 0 && this.pieces.length === 0 && !this.skipLf;
  }

  private text(text: string): string {
    if (this.first && text.length > 0) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) return text.slice(1);
    }
    return text;
  }

  /** Decoded text (`decode`), split into lines. */
  feed(text: string, onLine: (line: string) => void): void {
    let start = 0;
    const len = text.length;
    if (this.skipLf && len > 0) {
      if (text.charCodeAt(0) === 10) start = 1;
      this.skipLf = false;
    }
    // Native searches for the next LF and CR, each redone only once passed: linear, and fast on long lines.
    let lf = text.indexOf('\n', start);
    let cr = text.indexOf('\r', start);
    while (lf !== -1 || cr !== -1) {
      const i = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      if (this.pending + (i - start) > this.maxBytes) throw new SizeLimitError(this.what, this.maxBytes);
      onLine(this.take(text.slice(start, i)));
      let next = i + 1;
      if (i === cr) {
        if (next < len) {
          if (text.charCodeAt(next) === 10) next++;
        } else this.skipLf = true;
      }
      start = next;
      if (lf !== -1 && lf < start) lf = text.indexOf('\n', start);
      if (cr !== -1 && cr < start) cr = text.indexOf('\r', start);
    }
    if (start < len) {
      this.pending += len - start;
      if (this.pending > this.maxBytes) throw new SizeLimitError(this.what, this.maxBytes);
      this.pieces.push(text.slice(start));
    }
  }

  private take(last: string): string {
    if (this.pieces.length === 0) return last;
    this.pieces.push(last);
    const line = this.pieces.join('');
    this.pieces = [];
    this.pending = 0;
    return line;
  }
}
