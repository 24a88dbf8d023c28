/**
 * @module
 * The credit plugin's metrics: answers whose usage went beyond their reservation (or was malformed), and the credits
 * the operator carried for them.
 */
import { Counter, type Registry } from '../../src/plugin';

export type CreditMetrics = ReturnType<typeof creditMetrics>;

/** Registered once at setup. */
export function creditMetrics(registry: Registry) {
  const registers = [registry];
  return {
    overruns: new Counter({
      name: 'gateway_credit_overrun_total',
      help: 'Answers whose upstream usage exceeded the reservation or was malformed, by model and reason',
      labelNames: ['model', 'reason'],
      registers,
    }),
    overrunCredits: new Counter({
      name: 'gateway_credit_overrun_credits_total',
      help: 'Credits of upstream usage beyond the reservation, carried by the operator, by model',
      labelNames: ['model'],
      registers,
    }),
  };
}
