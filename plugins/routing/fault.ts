import type { AttemptRecord, GatewayState } from '../../src/plugin';

/**
 * Whether a failed attempt is a mark against its deployment (which every tenant shares).
 * Not when the client caused it: a 4xx other than 429 (its request or header values), the
 * client going away or the gateway stopping (499, `shutting_down`), or a timeout that is the
 * client's own `timeout` running out before the upstream could reasonably answer.
 */
export function countsAgainstDeployment(record: AttemptRecord, s: GatewayState): boolean {
  const err = record.error;
  if (!err) return false;
  if (err.status === 499 || err.code === 'shutting_down' || s.abort.aborted) return false;
  if (err.status < 500 && err.status !== 429) return false;
  if (err.code === 'upstream_timeout' && s.options.timeout !== undefined && record.latencyMs >= s.options.timeoutMs - 5)
    return false;
  return true;
}
