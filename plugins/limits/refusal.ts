/**
 * @module
 * How a limit's refusal reads: 429 with the scope and dimension that refused, and when to retry.
 */
import { errors } from '../../src/plugin';
import type { Admission, ScopeLimits } from './counter-store';

const SCOPE_KIND: Record<string, string> = { k: 'key', a: 'account', m: 'model', km: 'key_model' };
const SCOPE_TEXT: Record<string, string> = {
  k: 'this key',
  a: "this key's account",
  m: 'this model',
  km: 'this key on this model',
};

const kindOf = (s: ScopeLimits) => s.id.slice(0, s.id.indexOf(':'));

/** The scope's kind as the refusals metric labels it. */
export const scopeKind = (s: ScopeLimits) => SCOPE_KIND[kindOf(s)];

export function refusal(a: Extract<Admission, { ok: false }>, scope: ScopeLimits, tokens: number) {
  const retryS = Math.max(1, Math.ceil(a.retryAfterMs / 1000));
  const who = SCOPE_TEXT[kindOf(scope)];
  if (a.dimension === 'concurrency') {
    return errors.rateLimited(
      'concurrency_limit_exceeded',
      `Too many concurrent requests for ${who} (limit ${scope.concurrency}); retry when one ends`,
      retryS,
    );
  }
  if (a.dimension === 'requests')
    return errors.rateLimited(
      'rate_limit_exceeded',
      `Rate limit for ${who}: ${scope.rpm} requests per minute; retry in ${retryS} s`,
      retryS,
    );
  if (tokens > scope.tpm) {
    return errors.rateLimited(
      'rate_limit_exceeded',
      `This request may use ${tokens} tokens, ` +
        `more than the ${scope.tpm} tokens per minute allowed for ${who}; lower max_tokens`,
      retryS,
    );
  }
  return errors.rateLimited(
    'rate_limit_exceeded',
    `Rate limit for ${who}: ${scope.tpm} tokens per minute; retry in ${retryS} s`,
    retryS,
  );
}
