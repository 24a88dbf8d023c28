/**
 * @module
 * The limits plugin's metrics, registered once at setup.
 */
import { Counter, Gauge, type Registry } from '../../src/plugin';

export type LimitsMetrics = ReturnType<typeof limitsMetrics>;

export function limitsMetrics(registry: Registry) {
  const registers = [registry];
  return {
    storeUp: new Gauge({
      name: 'gateway_limits_store_up',
      help: 'Whether the limits counter store answers (1) or the fail mode applies (0)',
      registers,
    }),
    refusals: new Counter({
      name: 'gateway_limits_refusals_total',
      help: 'Requests refused by a limit, by scope kind and dimension',
      labelNames: ['scope', 'dimension'],
      registers,
    }),
    failModeUsed: new Counter({
      name: 'gateway_limits_fail_mode_total',
      help: 'Requests decided by the fail mode while the counter store was unreachable',
      labelNames: ['mode'],
      registers,
    }),
  };
}
