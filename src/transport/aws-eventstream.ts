import { crc32 } from 'node:zlib';
import type { UpstreamEvent } from '../providers/types';
import { DEFAULT_MAX_EVENT_BYTES, SizeLimitError } from './limits';

/**
 * The AWS event-stream binary framing (application/vnd.amazon.eventstream): each message
 * is total length (4), headers length (4), prelude CRC32 (4), headers, payload, message
 * CRC32 (4). Both CRCs are checked. The event is named by its `:event-type` header (or
 * `:exception-type` for exceptions, prefixed `exception:`); the payload is the data.
 */
export class AwsEventStreamParser {
  /** Bytes received and not yet framed, kept as pieces until a whole message is there (linear, no re-concatenation). */
  private pieces: Buffer[] = [];
  private pending = 0;

  /** `maxBytes`: the largest message accepted; a prelude announcing more throws a SizeLimitError at once. */
  constructor(private readonly maxBytes = DEFAULT_MAX_EVENT_BYTES) {}

  push(chunk: Uint8Array, out: UpstreamEvent[] = []): UpstreamEvent[] {
    if (chunk.length > 0) {
      this.pieces.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      this.pending += chunk.length;
    }
    while (this.pending >= 12) {
      const head = this.peek(12);
      const total = head.readUInt32BE(0);
      if (total < 16) throw new Error('event stream: bad message length');
      if (total > this.maxBytes) throw new SizeLimitError('a stream frame', this.maxBytes);
      if (this.pending < total) break;
      const msg = this.take(total);
      if (crc32(msg.subarray(0, 8)) !== msg.readUInt32BE(8)) throw new Error('event stream: prelude CRC mismatch');
      if (crc32(msg.subarray(0, total - 4)) !== msg.readUInt32BE(total - 4))
        throw new Error('event stream: message CRC mismatch');
      const headersLength = msg.readUInt32BE(4);
      const headers = parseHeaders(msg.subarray(12, 12 + headersLength));
      const data = msg.subarray(12 + headersLength, total - 4).toString('utf8');
      const type =
        headers[':message-type'] === 'exception'
          ? `exception:${headers[':exception-type'] ?? 'unknown'}`
          : headers[':message-type'] === 'error'
            ? `exception:${headers[':error-code'] ?? 'unknown'}`
            : (headers[':event-type'] ?? '');
      out.push({ event: type, data });
    }
    return out;
  }

  end(out: UpstreamEvent[] = []): UpstreamEvent[] {
    if (this.pending > 0) throw new Error('event stream: truncated message');
    return out;
  }

  /** The first n pending bytes (joining the pieces only as far as needed). */
  private peek(n: number): Buffer {
    if (this.pieces[0].length < n) this.pieces = [Buffer.concat(this.pieces)];
    return this.pieces[0];
  }

  /** Remove and return the first n pending bytes. */
  private take(n: number): Buffer {
    const all = this.pieces.length === 1 ? this.pieces[0] : Buffer.concat(this.pieces);
    const msg = all.subarray(0, n);
    const rest = all.subarray(n);
    this.pieces = rest.length > 0 ? [rest] : [];
    this.pending -= n;
    return msg;
  }
}

function parseHeaders(b: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let i = 0;
  while (i < b.length) {
    const nameLen = b.readUInt8(i);
    const name = b.subarray(i + 1, i + 1 + nameLen).toString('utf8');
    i += 1 + nameLen;
    const type = b.readUInt8(i++);
    if (type === 7 || type === 6) {
      const len = b.readUInt16BE(i);
      out[name] = b.subarray(i + 2, i + 2 + len).toString(type === 7 ? 'utf8' : 'base64');
      i += 2 + len;
    } else {
      // booleans (0, 1) have no value; bytes/short/int/long/timestamp/uuid are fixed-size.
      const size: Record<number, number> = { 0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16 };
      i += size[type] ?? 0;
    }
  }
  return out;
}

/** Encode one message (tests and mock upstreams). */
export function encodeEventMessage(headers: Record<string, string>, payload: string): Buffer {
  const hs = Buffer.concat(
    Object.entries(headers).map(([k, v]) => {
      const name = Buffer.from(k, 'utf8');
      const value = Buffer.from(v, 'utf8');
      const h = Buffer.alloc(1 + name.length + 1 + 2 + value.length);
      h.writeUInt8(name.length, 0);
      name.copy(h, 1);
      h.writeUInt8(7, 1 + name.length);
      h.writeUInt16BE(value.length, 2 + name.length);
      value.copy(h, 4 + name.length);
      return h;
    }),
  );
  const body = Buffer.from(payload, 'utf8');
  const total = 12 + hs.length + body.length + 4;
  const msg = Buffer.alloc(total);
  msg.writeUInt32BE(total, 0);
  msg.writeUInt32BE(hs.length, 4);
  msg.writeUInt32BE(crc32(msg.subarray(0, 8)), 8);
  hs.copy(msg, 12);
  body.copy(msg, 12 + hs.length);
  msg.writeUInt32BE(crc32(msg.subarray(0, total - 4)), total - 4);
  return msg;
}
