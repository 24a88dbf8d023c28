import { crc32 } from 'node:zlib';
import type { UpstreamEvent } from '../providers/types';

/**
 * The AWS event-stream binary framing (application/vnd.amazon.eventstream): each message
 * is total length (4), headers length (4), prelude CRC32 (4), headers, payload, message
 * CRC32 (4). Both CRCs are checked. The event is named by its `:event-type` header (or
 * `:exception-type` for exceptions, prefixed `exception:`); the payload is the data.
 */
export class AwsEventStreamParser {
  private buf: Buffer = Buffer.alloc(0);

  push(chunk: Uint8Array, out: UpstreamEvent[] = []): UpstreamEvent[] {
    this.buf = this.buf.length === 0 ? Buffer.from(chunk) : Buffer.concat([this.buf, chunk]);
    while (this.buf.length >= 12) {
      const total = this.buf.readUInt32BE(0);
      if (total < 16) throw new Error('event stream: bad message length');
      if (this.buf.length < total) break;
      const msg = this.buf.subarray(0, total);
      this.buf = this.buf.subarray(total);
      if (crc32(msg.subarray(0, 8)) !== msg.readUInt32BE(8)) throw new Error('event stream: prelude CRC mismatch');
      if (crc32(msg.subarray(0, total - 4)) !== msg.readUInt32BE(total - 4)) throw new Error('event stream: message CRC mismatch');
      const headersLength = msg.readUInt32BE(4);
      const headers = parseHeaders(msg.subarray(12, 12 + headersLength));
      const data = msg.subarray(12 + headersLength, total - 4).toString('utf8');
      const type = headers[':message-type'] === 'exception' ? `exception:${headers[':exception-type'] ?? 'unknown'}` : headers[':message-type'] === 'error' ? `exception:${headers[':error-code'] ?? 'unknown'}` : headers[':event-type'] ?? '';
      out.push({ event: type, data });
    }
    return out;
  }

  end(out: UpstreamEvent[] = []): UpstreamEvent[] {
    if (this.buf.length > 0) throw new Error('event stream: truncated message');
    return out;
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
