import type { IncomingMessage } from 'node:http';
import { errors } from '../errors';

/** "1mb" -> bytes. The config schema guarantees the shape. */
export function parseSize(limit: string): number {
  const m = /^([0-9]+)(b|kb|mb)$/.exec(limit);
  if (!m) throw new Error(`bad size '${limit}'`);
  return Number(m[1]) * (m[2] === 'mb' ? 1024 * 1024 : m[2] === 'kb' ? 1024 : 1);
}

/**
 * Read a JSON body of at most `limit` bytes: 413 as soon as the limit is passed (or
 * announced by Content-Length), 400 for bytes that are not JSON. Any media type is
 * read as JSON except one that is plainly something else. Not an async function: the body
 * is parsed where its last chunk arrives, and the one promise settles with the value.
 */
export function readJson(
  req: IncomingMessage,
  limit: number,
  limitText: string,
  maxDepth = DEFAULT_MAX_DEPTH,
): Promise<unknown> {
  const type = req.headers['content-type'];
  if (
    type &&
    !/^application\/([a-z0-9.+-]*\+)?json\b|^text\/plain\b/i.test(type) &&
    !/^application\/x-www-form-urlencoded/i.test(type)
  ) {
    return Promise.reject(errors.unsupportedMediaType());
  }
  return collect(req, limit, limitText, (parts) => parseBody(parts, maxDepth));
}

function parseBody(parts: Buffer[], maxDepth: number): unknown {
  const text = parts.length === 1 ? parts[0].toString('utf8') : Buffer.concat(parts).toString('utf8');
  if (text.trim() === '') throw errors.invalidJson('the body is empty');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw errors.invalidJson((e as Error).message);
  }
  checkDepth(value, maxDepth);
  return value;
}

/** How deeply objects and arrays may nest in a request body (a JSON Schema in `tools` needs a few dozen at most). */
export const DEFAULT_MAX_DEPTH = 64;

/**
 * 400 naming the field when objects/arrays nest deeper than `max`. Recursion is bounded by
 * `max` itself, so a body nested 100,000 deep never reaches the code that would overflow the stack.
 */
export function checkDepth(value: unknown, max: number): void {
  const path = tooDeep(value, max);
  if (path) {
    const field = path.length > 0 ? path.join('.') : 'body';
    throw errors.invalidRequest(`${field} nests deeper than ${max} levels`, path[0] ?? null, 'json_too_deep');
  }
}

/** The path (at most a few segments of it) to the first value nested deeper than `left` levels. */
function tooDeep(value: unknown, left: number): Array<string> | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if (left === 0) return [];
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const p = tooDeep(value[i], left - 1);
      if (p) return prefix(String(i), p);
    }
    return undefined;
  }
  for (const k in value) {
    const p = tooDeep((value as Record<string, unknown>)[k], left - 1);
    if (p) return prefix(k.slice(0, 64), p);
  }
  return undefined;
}

/** Keep the named field short: its first three segments. */
function prefix(seg: string, rest: string[]): string[] {
  return rest.length >= 3 ? [seg, ...rest.slice(0, 2), '…'] : [seg, ...rest];
}

/**
 * The body's chunks, made into `finish`'s value, failing with 413 when Content-Length announces more than the limit
 * (nothing is read) or as soon as the chunks pass it, and with what `finish` throws. Events, not `for await`: it is
 * measurably cheaper per request.
 */
function collect<T>(
  req: IncomingMessage,
  limit: number,
  limitText: string,
  finish: (parts: Buffer[]) => T,
): Promise<T> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.reject(errors.bodyTooLarge(limitText));
  }
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.resume();
        reject(errors.bodyTooLarge(limitText));
        return;
      }
      parts.push(chunk);
    };
    // Nothing comes after 'end': its listeners stay, with the request they belong to (removing three cost a request
    // about as much as adding them).
    const onEnd = () => {
      try {
        resolve(finish(parts));
      } catch (e) {
        reject(e);
      }
    };
    const onError = (e: Error) => {
      cleanup();
      reject(errors.invalidRequest(`The request body could not be read: ${e.message}`, null, 'body_read_failed'));
    };
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

/** The raw body (at most `limit` bytes): for signatures computed over the exact bytes. */
export function readRaw(req: IncomingMessage, limit: number, limitText: string): Promise<Buffer> {
  return collect(req, limit, limitText, (parts) => Buffer.concat(parts));
}

/** An application/x-www-form-urlencoded body (an HTML form post). */
export async function readForm(req: IncomingMessage, limit: number, limitText: string): Promise<URLSearchParams> {
  return new URLSearchParams((await readRaw(req, limit, limitText)).toString('utf8'));
}
