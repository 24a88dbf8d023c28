import { errors } from '../errors';

/** Headers a client may never set on the upstream request: hop-by-hop, framing, routing, credentials. */
const FORBIDDEN = new Set([
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade',
  'host', 'content-length', 'content-type', 'expect', 'authorization', 'x-api-key', 'api-key', 'x-goog-api-key', 'anthropic-version', 'cookie',
  'x-amz-date', 'x-amz-security-token', 'x-amz-content-sha256', 'forwarded', 'x-forwarded-for', 'x-forwarded-host', 'traceparent', 'tracestate',
]);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * The client's `headers` / `extra_headers` for the upstream, lower-cased and checked:
 * valid names only, no CR/LF/NUL in values, none of the forbidden ones (400 naming it).
 */
export function clientUpstreamHeaders(...sources: Array<Record<string, unknown> | undefined>): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const src of sources) {
    if (!src) continue;
    for (const [name, value] of Object.entries(src)) {
      const lower = name.toLowerCase();
      const param = `headers.${name}`;
      if (!TOKEN.test(name)) throw errors.invalidRequest(`'${name.slice(0, 64)}' is not a valid header name`, param, 'invalid_header');
      if (typeof value !== 'string' || /[\r\n\0]/.test(value)) throw errors.invalidRequest(`The value of header '${name}' must be a string without CR, LF or NUL`, param, 'invalid_header');
      if (FORBIDDEN.has(lower) || lower.startsWith('proxy-') || lower.startsWith('sec-')) throw errors.invalidRequest(`Header '${name}' cannot be set on the upstream request`, param, 'forbidden_header');
      (out ??= {})[lower] = value;
    }
  }
  return out;
}
