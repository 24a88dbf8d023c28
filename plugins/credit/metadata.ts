import { errors, type GatewayError } from '../../src/plugin';

/** OpenAI's rule for `metadata`: at most 16 keys of at most 64 characters, string values of at most 512. */
export const METADATA_LIMITS = { keys: 16, keyLength: 64, valueLength: 512 } as const;

/**
 * The request's metadata breaks the rule (also checked by the params schema; credit checks
 * again so that no chain can store a record that cannot be serialised): the 400 to send.
 */
export function metadataProblem(metadata: unknown): GatewayError | null {
  if (metadata === undefined || metadata === null) return null;
  const bad = (why: string) => errors.invalidRequest(`metadata ${why}`, 'metadata', 'invalid_metadata');
  if (typeof metadata !== 'object' || Array.isArray(metadata)) return bad('must be an object of string values');
  const entries = Object.entries(metadata);
  if (entries.length > METADATA_LIMITS.keys) return bad(`may have at most ${METADATA_LIMITS.keys} keys`);
  for (const [k, v] of entries) {
    if (k.length > METADATA_LIMITS.keyLength)
      return bad(`keys may have at most ${METADATA_LIMITS.keyLength} characters`);
    if (typeof v !== 'string') return bad(`values must be strings (metadata.${k.slice(0, 64)} is not)`);
    if (v.length > METADATA_LIMITS.valueLength)
      return bad(`values may have at most ${METADATA_LIMITS.valueLength} characters`);
  }
  return null;
}
