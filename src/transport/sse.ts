import type { UpstreamEvent } from '../providers/types';
import { DEFAULT_MAX_EVENT_BYTES, LineSplitter, SizeLimitError } from './limits';

/**
 * Incremental parser for text/event-stream (WHATWG HTML, "event stream interpretation"):
 * `data:` lines are joined with \n, an empty line dispatches, `:` lines are comments,
 * CR, LF and CRLF all end a line. Linear in the bytes fed; a line or an event's data
 * longer than `maxBytes` throws a SizeLimitError.
 */
export class SseParser {
  private readonly lines: LineSplitter;
  private data: string[] = [];
  private dataBytes = 0;
  private event: string | undefined;
  private out: UpstreamEvent[] = [];
  private readonly onLine = (line: string) => this.line(line);

  constructor(private readonly maxBytes = DEFAULT_MAX_EVENT_BYTES) {
    this.lines = new LineSplitter(maxBytes, 'a stream line');
  }

  push(chunk: Uint8Array, out: UpstreamEvent[] = []): UpstreamEvent[] {
    this.out = out;
    this.lines.push(chunk, this.onLine);
    return out;
  }

  end(out: UpstreamEvent[] = []): UpstreamEvent[] {
    this.out = out;
    this.lines.end(this.onLine);
    this.dispatch();
    return out;
  }

  private line(line: string): void {
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
export class NdjsonParser {
  private readonly lines: LineSplitter;
  private out: UpstreamEvent[] = [];
  private readonly onLine = (raw: string) => {
    const line = raw.trim();
    if (line) this.out.push({ data: line });
  };

  constructor(maxBytes = DEFAULT_MAX_EVENT_BYTES) {
    this.lines = new LineSplitter(maxBytes, 'a stream line');
  }

  push(chunk: Uint8Array, out: UpstreamEvent[] = []): UpstreamEvent[] {
    this.out = out;
    this.lines.push(chunk, this.onLine);
    return out;
  }

  end(out: UpstreamEvent[] = []): UpstreamEvent[] {
    this.out = out;
    this.lines.end(this.onLine);
    return out;
  }
}

export interface EventParser {
  push(chunk: Uint8Array, out?: UpstreamEvent[]): UpstreamEvent[];
  end(out?: UpstreamEvent[]): UpstreamEvent[];
}
