import { hash, randomInt, timingSafeEqual } from 'node:crypto';

/**
 * Gateway API keys: `sk-gw-` + 30 random base62 characters + a 6-character base62 CRC32
 * of the body (as GitHub's tokens carry one). Secret scanners match them with KEY_PATTERN;
 * the gateway rejects a mistyped key by its checksum without touching the store.
 */
export const KEY_PREFIX = 'sk-gw-';
const BODY_LENGTH = 30;
const CHECKSUM_LENGTH = 6;
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** One regex for scanners: the whole key, on word boundaries. */
export const KEY_PATTERN = /\bsk-gw-[0-9A-Za-z]{36}\b/g;

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(s: string): number {
  let c = 0xffffffff;
  for (let i = 0; i < s.length; i++) c = CRC_TABLE[(c ^ s.charCodeAt(i)) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

export function base62(n: number, width: number): string {
  let out = '';
  let v = n;
  while (v > 0) {
    out = ALPHABET[v % 62] + out;
    v = Math.floor(v / 62);
  }
  return out.padStart(width, '0');
}

export function generateKey(): string {
  let body = '';
  for (let i = 0; i < BODY_LENGTH; i++) body += ALPHABET[randomInt(62)];
  return KEY_PREFIX + body + base62(crc32(body), CHECKSUM_LENGTH);
}

export type KeyCheck = 'ok' | 'malformed' | 'bad_checksum';

/** Shape and checksum, no store access. */
export function checkKey(key: string): KeyCheck {
  if (key.length !== KEY_PREFIX.length + BODY_LENGTH + CHECKSUM_LENGTH || !key.startsWith(KEY_PREFIX))
    return 'malformed';
  for (let i = KEY_PREFIX.length; i < key.length; i++) {
    const c = key.charCodeAt(i);
    const ok = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
    if (!ok) return 'malformed';
  }
  const body = key.slice(KEY_PREFIX.length, KEY_PREFIX.length + BODY_LENGTH);
  return key.slice(KEY_PREFIX.length + BODY_LENGTH) === base62(crc32(body), CHECKSUM_LENGTH) ? 'ok' : 'bad_checksum';
}

/** SHA-256 hex: the only form in which a key is stored. */
export function hashKey(key: string): string {
  return hash('sha256', key, 'hex'); // one call, no Hash object per request (Node >= 20.12; engines asks 20.18.1)
}

/** A redacted form for display: `sk-gw-...a1b2`. */
export function keyLabel(key: string): string {
  return `${KEY_PREFIX}...${key.slice(-4)}`;
}

export function constantTimeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
