import type { UpstreamEvent } from '../providers/types';

/**
 * Incremental parser for text/event-stream (WHATWG HTML, "event stream interpretation"):
 * `data:` lines are joined with \n, an empty line dispatches, `:` lines are comments,
 * CR, LF and CRLF all end a line. Feeding it bytes never buffers more than one event.
 */
export class SseParser {
  private readonly decoder = new TextDecoder('utf-8');
  private buf = '';
  private data: string[] = [];
  private event: string | undefined;

  push(chunk: Uint8Array, out: UpstreamEvent[] = []): UpstreamEvent[] {
    this.buf += this.decoder.decode(chunk, { stream: true });
    this.drain(out);
    return out;
  }

  end(out: UpstreamEvent[] = []): UpstreamEvent[] {
    this.buf += this.decoder.decode();
    if (this.buf.length > 0) this.buf += '\n';
    this.drain(out);
    this.dispatch(out);
    return out;
  }

  private drain(out: UpstreamEvent[]): void {
    let start = 0;
    for (;;) {
      let i = start;
      const len = this.buf.length;
      while (i < len) {
        const c = this.buf.charCodeAt(i);
        if (c === 10 || c === 13) break;
        i++;
      }
      if (i >= len) break;
      const line = this.buf.slice(start, i);
      // CRLF counts as one line end; a lone CR at the very end may be followed by LF later.
      if (this.buf.charCodeAt(i) === 13) {
        if (i + 1 >= len) break;
        start = this.buf.charCodeAt(i + 1) === 10 ? i + 2 : i + 1;
      } else start = i + 1;
      this.line(line, out);
    }
    this.buf = this.buf.slice(start);
  }

  private line(line: string, out: UpstreamEvent[]): void {
    if (line.length === 0) return this.dispatch(out);
    if (line.charCodeAt(0) === 58 /* : */) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    else if (field === 'event') this.event = value;
  }

  private dispatch(out: UpstreamEvent[]): void {
    if (this.data.length > 0) {
      const ev: UpstreamEvent = { data: this.data.join('\n') };
      if (this.event !== undefined) ev.event = this.event;
      out.push(ev);
    }
    this.data = [];
    this.event = undefined;
  }
}

/** Newline-delimited JSON (Ollama): every non-empty line is one event. */
export class NdjsonParser {
  private readonly decoder = new TextDecoder('utf-8');
  private buf = '';

  push(chunk: Uint8Array, out: UpstreamEvent[] = []): UpstreamEvent[] {
    this.buf += this.decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = this.buf.indexOf('\n')) !== -1) {
      const line = this.buf.slice(0, nl).trim();
      this.buf = this.buf.slice(nl + 1);
      if (line) out.push({ data: line });
    }
    return out;
  }

  end(out: UpstreamEvent[] = []): UpstreamEvent[] {
    this.buf += this.decoder.decode();
    const line = this.buf.trim();
    this.buf = '';
    if (line) out.push({ data: line });
    return out;
  }
}

export interface EventParser {
  push(chunk: Uint8Array, out?: UpstreamEvent[]): UpstreamEvent[];
  end(out?: UpstreamEvent[]): UpstreamEvent[];
}
