import { errors } from '../errors';

/**
 * Headers a client may never set on the upstream request: hop-by-hop, framing, routing,
 * credentials, the provider's account selectors (the operator's organisation and project are
 * not the client's to choose) and proxy headers (a client must not claim an address).
 */
const FORBIDDEN = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
  'content-type',
  'expect',
  'authorization',
  'x-api-key',
  'api-key',
  'x-goog-api-key',
  'anthropic-version',
  'cookie',
  'x-amz-date',
  'x-amz-security-token',
  'x-amz-content-sha256',
  'forwarded',
  'traceparent',
  'tracestate',
  'openai-organization',
  'openai-project',
  'x-real-ip',
  'x-client-ip',
  'true-client-ip',
  'cf-connecting-ip',
  'via',
]);
const FORBIDDEN_PREFIXES = ['proxy-', 'sec-', 'x-forwarded-'];
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/**
 * What an HTTP/1.1 field value may hold (RFC 9110 5.5): tab, visible ASCII, obs-text (Latin-1); nothing undici refuses.
 */
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Caps on what a client may forward upstream. */
export interface ForwardLimits {
  /** Number of headers. */
  maxHeaders: number;
  /** Total bytes of names and values. */
  maxBytes: number;
}

export const DEFAULT_FORWARD_LIMITS: ForwardLimits = { maxHeaders: 32, maxBytes: 8192 };

/** Is this a value undici (and HTTP/1.1) will carry? */
export function validHeaderValue(value: string): boolean {
  return FIELD_VALUE.test(value);
}

/**
 * The client's `headers` / `extra_headers` for the upstream, lower-cased and checked:
 * valid names, values that HTTP can carry, none of the forbidden ones, within the caps
 * (400 naming the header). A client's header mistake is its own 400, never a 502.
 */
export function forwardableHeaders(
  sources: Array<Record<string, unknown> | undefined>,
  limits: ForwardLimits,
): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  let count = 0;
  let bytes = 0;
  for (const src of sources) {
    if (!src) continue;
    for (const [name, value] of Object.entries(src)) {
      const lower = name.toLowerCase();
      const param = `headers.${name.slice(0, 64)}`;
      if (!TOKEN.test(name))
        throw errors.invalidRequest(`'${name.slice(0, 64)}' is not a valid header name`, param, 'invalid_header');
      if (typeof value !== 'string' || !FIELD_VALUE.test(value)) {
        throw errors.invalidRequest(
          `The value of header '${name.slice(0, 64)}' must be a string of Latin-1 text without control characters`,
          param,
          'invalid_header',
        );
      }
      if (FORBIDDEN.has(lower) || FORBIDDEN_PREFIXES.some((p) => lower.startsWith(p))) {
        throw errors.invalidRequest(
          `Header '${name.slice(0, 64)}' cannot be set on the upstream request`,
          param,
          'forbidden_header',
        );
      }
      if (++count > limits.maxHeaders)
        throw errors.invalidRequest(
          `At most ${limits.maxHeaders} headers may be forwarded upstream`,
          'headers',
          'too_many_headers',
        );
      bytes += name.length + value.length;
      if (bytes > limits.maxBytes)
        throw errors.invalidRequest(
          `Forwarded headers may hold at most ${limits.maxBytes} bytes`,
          'headers',
          'headers_too_large',
        );
      (out ??= {})[lower] = value;
    }
  }
  return out;
}

/** The same check with the default caps (for callers without a routing config). */
export function clientUpstreamHeaders(
  ...sources: Array<Record<string, unknown> | undefined>
): Record<string, string> | undefined {
  return forwardableHeaders(sources, DEFAULT_FORWARD_LIMITS);
}
