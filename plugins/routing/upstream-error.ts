import { GatewayError, redactSecrets } from '../../src/plugin';

/** The same error with its message redacted (a new object: errors may be shared). */
export function sanitizeError(e: GatewayError, secrets: readonly string[]): GatewayError {
  const message = redactSecrets(e.message, secrets);
  if (message === e.message) return e;
  return new GatewayError({
    status: e.status,
    type: e.type,
    code: e.code,
    message,
    param: e.param,
    retryable: e.retryable,
    retryAfter: e.retryAfter,
    details: e.details,
  });
}
