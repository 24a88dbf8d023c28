import type { ProviderConfig } from '../config/types';

const REDACTED = '[redacted]';

/**
 * Credential-like text, whatever key it is: bearer tokens, `sk-` keys, `key=`/`token=` pairs, JSON key fields, cloud
 * key shapes.
 */
const PATTERNS: Array<[RegExp, string]> = [
  [/\bBearer\s+[^\s"',;}]+/gi, `Bearer ${REDACTED}`],
  [/\bBasic\s+[A-Za-z0-9+/]{8,}={0,2}/g, `Basic ${REDACTED}`],
  [/\bsk-[A-Za-z0-9_*.-]{4,}/g, `sk-${REDACTED}`],
  [/\b([A-Za-z0-9_-]*(?:key|token|secret|password|signature|sig|credential)s?)=([^&\s"',;}]+)/gi, `$1=${REDACTED}`],
  [
    /("?(?:api[_-]?key|x-api-key|api-key|authorization|access[_-]?token|secret|password)"?\s*:\s*")([^"]+)"/gi,
    `$1${REDACTED}"`,
  ],
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, REDACTED],
  [/\bAIza[0-9A-Za-z_-]{30,}/g, REDACTED],
];

/**
 * Text with anything credential-like removed: the patterns above, then each of `secrets`
 * (the configured upstream key itself, however the upstream quoted it). The one function
 * that upstream error text passes through before it reaches a client or a log line.
 */
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4) out = withoutFragments(out, s);
  for (const [re, to] of PATTERNS) out = out.replace(re, to);
  return out;
}

/** The secrets of a provider's config: its key, its header values, and option values named like credentials. */
export function providerSecrets(p: ProviderConfig): string[] {
  const out: string[] = [];
  if (p.api_key) out.push(p.api_key);
  if (p.headers) out.push(...Object.values(p.headers));
  if (p.options) {
    for (const [k, v] of Object.entries(p.options))
      if (typeof v === 'string' && /key|secret|token|password|credential/i.test(k)) out.push(v);
  }
  return out;
}

/** Shortest piece of a configured secret that is removed wherever it appears (providers echo parts of keys). */
const FRAGMENT = 10;

/** `text` with the secret removed, and any piece of it at least FRAGMENT long (or the whole of a shorter secret). */
function withoutFragments(text: string, secret: string): string {
  const n = Math.min(FRAGMENT, secret.length);
  let covered: Uint8Array | undefined;
  for (let i = 0; i + n <= secret.length; i++) {
    const piece = secret.slice(i, i + n);
    for (let at = text.indexOf(piece); at !== -1; at = text.indexOf(piece, at + 1))
      (covered ??= new Uint8Array(text.length)).fill(1, at, at + n);
  }
  if (!covered) return text;
  let out = '';
  for (let i = 0; i < text.length;) {
    if (covered[i]) {
      while (i < text.length && covered[i]) i++;
      out += REDACTED;
    } else out += text[i++];
  }
  return out;
}
