import { randomFillSync } from 'node:crypto';

/**
 * Random identifiers from a pooled buffer: one getrandom call per 256 ids instead of one
 * per id (ids are made on every request, and the syscall showed in the profile).
 */
const POOL_IDS = 256;
const ID_BYTES = 18;
const pool = Buffer.allocUnsafe(POOL_IDS * ID_BYTES);
let offset = pool.length;

function nextBytes(): Buffer {
  if (offset >= pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const b = pool.subarray(offset, offset + ID_BYTES);
  offset += ID_BYTES;
  return b;
}

/** 144 random bits, base64url (24 characters), with an optional prefix. */
export function randomId(prefix = ''): string {
  return prefix + nextBytes().toString('base64url');
}

/** A completion id in OpenAI's form: `chatcmpl-` and 24 base62-ish characters. */
export function newCompletionId(): string {
  return randomId('chatcmpl-');
}
