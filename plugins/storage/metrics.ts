/**
 * @module
 * The storage plugin's metrics.
 */
import { Counter, type Registry } from '../../src/plugin';

/** Registered once at setup. */
export function storageMetrics(registry: Registry) {
  return {
    writeErrors: new Counter({
      name: 'gateway_storage_write_errors_total',
      help: 'Stored-response writes that failed',
      registers: [registry],
    }),
  };
}
