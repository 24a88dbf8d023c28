/**
 * @module
 * The cache plugin's metrics: requests by model and result (hit, miss, bypass: the hit ratio per model is
 * hit / (hit + miss)), and entries not stored or not read because of the backend or their size.
 */
import { Counter, type Registry } from '../../src/plugin';

export function cacheMetrics(registry: Registry) {
  return {
    requests: new Counter({
      name: 'gateway_cache_requests_total',
      help: 'Chain requests by model and what the response cache did (hit, miss, bypass)',
      labelNames: ['model', 'result'] as const,
      registers: [registry],
    }),
    skipped: new Counter({
      name: 'gateway_cache_skipped_total',
      help:
        'Cache reads or writes that did not happen: backend_error (read or write failed), too_large (entry size), ' +
        'embedding_error (the semantic cache could not embed the prompt)',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
  };
}

export type CacheMetrics = ReturnType<typeof cacheMetrics>;
