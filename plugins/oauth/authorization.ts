/**
 * @module
 * What an authorization request (GET /auth, the consent form) may ask for: a callback on the allowlist, a PKCE
 * challenge and method, and a credit limit for the new key.
 */
import { creditsSchema as credits, errors } from '../../src/plugin';
import { PKCE_VALUE } from './pkce';
import type { OAuthConfig } from './schema';

/** The callback URL's origin, if codes may go there. */
export function allowedCallback(config: Readonly<OAuthConfig>, raw: unknown): URL {
  let url: URL;
  try {
    url = new URL(String(raw));
  } catch {
    throw errors.invalidRequest('callback_url must be an absolute URL', 'callback_url', 'invalid_callback_url');
  }
  const local =
    (url.hostname === 'localhost' || url.hostname === '127.0.0.1' || url.hostname === '[::1]') &&
    url.protocol === 'http:';
  if (!(config.allow_localhost && local) && !config.callback_allowlist.includes(url.origin)) {
    throw errors.forbidden(
      'callback_not_allowed',
      `callback_url's origin ${url.origin} is not on this gateway's allowlist`,
    );
  }
  return url;
}

/** S256 unless plain is allowed and asked for; nothing said is S256. */
export function checkMethod(config: Readonly<OAuthConfig>, m: unknown): 'S256' | 'plain' {
  const method = m === undefined || m === '' ? 'S256' : String(m);
  if (method === 'S256' || (method === 'plain' && config.allow_plain)) return method;
  throw errors.invalidRequest(
    `code_challenge_method must be S256${config.allow_plain ? ' or plain' : ''}`,
    'code_challenge_method',
    'invalid_code_challenge_method',
  );
}

export function checkChallenge(c: unknown): string {
  if (typeof c !== 'string' || !PKCE_VALUE.test(c))
    throw errors.invalidRequest(
      'code_challenge must be 43-128 characters of A-Z a-z 0-9 - . _ ~',
      'code_challenge',
      'invalid_code_challenge',
    );
  return c;
}

/** The consent form's credit limit, held to the admin API's range for a key's limit. */
export function consentLimit(raw: string | null): number | null {
  if (raw === null || raw.trim() === '') return null;
  const limit = Number(raw);
  if (!Number.isFinite(limit) || limit < credits.minimum || limit > credits.maximum) {
    throw errors.invalidRequest(
      `limit must be a number from ${credits.minimum} to ${credits.maximum}`,
      'limit',
      'invalid_field',
    );
  }
  return limit;
}
