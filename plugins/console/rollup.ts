/**
 * @module
 * The usage roll-up's schedule: generation records into the daily aggregates (usage.ts), in the background, one at
 * a time, at start and every `rollup_interval_ms`.
 */
import type { Logger } from 'pino';
import type { UsageRepo } from './usage';

/** Starts rolling up; the returned close stops the timer and waits for a roll-up under way. */
export function startRollUps(usage: UsageRepo, intervalMs: number, logger: Logger): () => Promise<void> {
  // In the background, one at a time: a first roll-up over a large history must not hold up the start.
  let rolling: Promise<unknown> | undefined;
  const rollUp = () =>
    (rolling ??= usage
      .rollUp()
      .catch((e: unknown) => logger.error({ err: e }, 'usage roll-up failed'))
      .finally(() => (rolling = undefined)));
  void rollUp();
  const timer = setInterval(() => void rollUp(), intervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await rolling;
  };
}
