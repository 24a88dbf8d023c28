import { createHash } from 'node:crypto';
import { constantTimeEqual } from '../../src/plugin';

/** RFC 7636: a verifier or S256 challenge is 43-128 characters of [A-Za-z0-9-._~]. */
export const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/;

export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

export function verifyPkce(method: 'S256' | 'plain', challenge: string, verifier: string): boolean {
  if (!PKCE_VALUE.test(verifier)) return false;
  return constantTimeEqual(method === 'S256' ? s256(verifier) : verifier, challenge);
}
