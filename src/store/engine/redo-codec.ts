import { deserialize, serialize } from 'node:v8';

/** The first byte of every payload node:v8's serializer writes (its version tag); JSON text never starts with it. */
const V8_TAG = 0xff;
/** Deeper than this, a value is left to node:v8 (the check below recurses). */
const MAX_DEPTH = 64;

/**
 * The redo log's payload for `value`, after `header` bytes left for the caller to fill: JSON text when JSON carries
 * it exactly, else node:v8's serialization (what the log held before, and still reads).
 *
 * Why not node:v8 for all: its serializer keeps every object it wrote reachable until the serializer itself is
 * garbage collected, so a record's objects outlive the next scavenge of the store's worker and are promoted. Measured
 * with `bench/store-ops.ts` at c=1 (30,000 requests): the worker's scavenges kept 14.7% of what it allocated and each
 * paused it 4.3 ms on average (up to 8); written as JSON, 0.3% and 0.24 ms. A settlement that arrives during such a
 * pause waits for it.
 */
export function encodePayload(value: unknown, header = 0): Buffer {
  const text = jsonText(value);
  if (text === null) {
    const v8 = serialize(value);
    return header === 0 ? v8 : Buffer.concat([Buffer.alloc(header), v8]);
  }
  return textPayload([text], header);
}

/**
 * The payload of the JSON text `parts` make together (what encodePayload writes for a value JSON carries exactly),
 * after `header` bytes: each part written straight into the buffer that is returned, no joined copy of the text.
 */
export function textPayload(parts: readonly string[], header = 0): Buffer {
  let bytes = header;
  for (const p of parts) bytes += Buffer.byteLength(p, 'utf8');
  const buf = Buffer.allocUnsafe(bytes);
  let at = header;
  for (const p of parts) at += buf.write(p, at, 'utf8');
  return buf;
}

/** `value` as JSON text when JSON.parse gives back exactly what node:v8's serializer would (jsonExact); else null. */
export function jsonText(value: unknown): string | null {
  return jsonExact(value, 0) ? JSON.stringify(value) : null;
}

/** Whether `v` is null, a string, a boolean, or a number JSON gives back as itself (finite, not -0). */
export function scalarExact(v: unknown): boolean {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(v) && !Object.is(v, -0);
    default:
      return v === null;
  }
}

/** The value of a payload encodePayload (or an older version's node:v8 serialization) wrote. */
export function decodePayload(payload: Buffer): unknown {
  return payload.length > 0 && payload[0] === V8_TAG ? deserialize(payload) : JSON.parse(payload.toString('utf8'));
}

/**
 * Whether JSON.parse(JSON.stringify(v)) gives back what node:v8's serializer would: null, booleans, strings, finite
 * numbers other than -0, and dense arrays and plain objects of those (what crosses from the main thread as a message).
 * Anything else (bigint, NaN, undefined, typed arrays, dates, maps, boxed values, another prototype) says no.
 */
function jsonExact(v: unknown, depth: number): boolean {
  if (typeof v !== 'object' || v === null) return scalarExact(v);
  if (depth >= MAX_DEPTH) return false;
  // for-in (no array of keys allocated): a plain object's prototype has no enumerable properties to add.
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) if (!(i in v) || !jsonExact(v[i], depth + 1)) return false;
    let own = 0;
    for (const _ in v) own++;
    return own === v.length; // no named properties beside the elements
  }
  if (Object.getPrototypeOf(v) !== Object.prototype) return false;
  const o = v as Record<string, unknown>;
  for (const k in o) if (!jsonExact(o[k], depth + 1)) return false;
  return true;
}
