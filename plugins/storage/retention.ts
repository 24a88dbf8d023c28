/**
 * @module
 * Retention: expired stored responses are deleted in small batches on a timer, so a large backlog never stalls
 * requests.
 */
import type { Logger } from 'pino';
import type { SweepGate } from '../../src/plugin';
import type { ResponseRepo } from './store/repo';
import type { StorageConfig } from './schema';

/**
 * Starts the sweep (unref'd; the caller clears it on close). Rounds before the first stored response expires do
 * nothing (an idle store stays idle): `gate` is lowered by every write with an expiry.
 */
export function startRetention(
  config: Readonly<StorageConfig>,
  responses: ResponseRepo,
  gate: SweepGate,
  logger: Logger,
): NodeJS.Timeout {
  let sweeping = false;
  const sweeper = setInterval(() => {
    if (sweeping || config.ttl_seconds === 0) return;
    sweeping = true;
    const now = Date.now();
    gate
      .round(
        now,
        config.sweep_batch,
        () => responses.deleteExpired(config.sweep_batch, now),
        () => responses.nextExpiry(),
      )
      .catch((e: unknown) => logger.error({ err: e }, 'response retention sweep failed'))
      .finally(() => (sweeping = false));
  }, config.sweep_interval_ms);
  sweeper.unref();
  return sweeper;
}
