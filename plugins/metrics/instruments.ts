import { Counter, Gauge, type Registry } from '../../src/plugin';
import { FastCounter } from './fast-counter';
import { FastHistogram } from './fast-histogram';

/** Latency buckets (seconds) from 0.1 ms to 60 s: gateway overhead sits at the low end, upstreams at the high end. */
export const LATENCY_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];
const FAST_BUCKETS = [0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05];

/** Every request metric, registered once. Label values come from config (models, providers), never from the request. */
export function createInstruments(registry: Registry, keyLabel: boolean) {
  const registers = [registry];
  const requestLabels = keyLabel
    ? ['model', 'provider', 'status_class', 'streamed', 'key']
    : ['model', 'provider', 'status_class', 'streamed'];
  return {
    requests: new FastCounter(
      'gateway_requests_total',
      'Chat requests by model, provider, status class and streamed',
      requestLabels,
      registry,
    ),
    http: new FastCounter(
      'gateway_http_requests_total',
      'HTTP requests by route pattern, method and status class',
      ['route', 'method', 'status_class'],
      registry,
    ),
    added: new FastHistogram(
      'gateway_added_latency_seconds',
      'Time the gateway adds to a request (total, or to the first streamed byte, minus upstream time)',
      ['model'],
      LATENCY_BUCKETS,
      registry,
    ),
    duration: new FastHistogram(
      'gateway_request_duration_seconds',
      'Whole chat request time, to the last byte',
      ['model', 'streamed'],
      LATENCY_BUCKETS,
      registry,
    ),
    upstream: new FastHistogram(
      'gateway_upstream_latency_seconds',
      'Upstream attempt time (to the answer, or to the first streamed content)',
      ['provider'],
      LATENCY_BUCKETS,
      registry,
    ),
    ttft: new FastHistogram(
      'gateway_time_to_first_token_seconds',
      'Time to the first streamed content',
      ['model'],
      LATENCY_BUCKETS,
      registry,
    ),
    interToken: new FastHistogram(
      'gateway_inter_token_seconds',
      'Time between streamed chunks',
      ['model'],
      LATENCY_BUCKETS,
      registry,
    ),
    tokens: new FastCounter(
      'gateway_tokens_total',
      'Tokens by model and type (prompt, completion, cached, reasoning)',
      ['model', 'type'],
      registry,
    ),
    credits: new FastCounter('gateway_credits_charged_total', 'Credits charged', ['model'], registry),
    upstreamErrors: new Counter({
      name: 'gateway_upstream_errors_total',
      help: 'Failed upstream attempts by provider and error code',
      labelNames: ['provider', 'code'],
      registers,
    }),
    attempts: new FastCounter(
      'gateway_upstream_attempts_total',
      'Upstream attempts by provider and outcome (ok, error; skipped: refused by a guard, never sent)',
      ['provider', 'outcome'],
      registry,
    ),
    keyExtraAttempts: new Counter({
      name: 'gateway_key_extra_attempts_total',
      help:
        'Attempts beyond the first of a request (retries, fallbacks; made or refused by a guard), by key hash prefix: ' +
        'a series only for keys whose requests fan out',
      labelNames: ['key'],
      registers,
    }),
    retries: new Counter({
      name: 'gateway_retries_total',
      help: 'Attempts beyond the first within one request',
      labelNames: ['model'],
      registers,
    }),
    fallbacks: new Counter({
      name: 'gateway_fallbacks_total',
      help: 'Requests answered by another model than the one asked for',
      labelNames: ['model'],
      registers,
    }),
    inFlight: new Gauge({ name: 'gateway_requests_in_flight', help: 'Chat requests being handled', registers }),
    openStreams: new Gauge({ name: 'gateway_open_streams', help: 'Streams being written to clients', registers }),
    plugin: new FastHistogram(
      'gateway_plugin_duration_seconds',
      "Each plugin's own time per request (excluding the plugins after it)",
      ['plugin'],
      FAST_BUCKETS,
      registry,
    ),
    store: new FastHistogram(
      'gateway_store_operation_seconds',
      'Store operations by kind',
      ['op'],
      FAST_BUCKETS.concat([0.1, 0.5, 1]),
      registry,
    ),
    storeErrors: new Counter({
      name: 'gateway_store_errors_total',
      help: 'Failed store operations by kind',
      labelNames: ['op'],
      registers,
    }),
  };
}

export type Instruments = ReturnType<typeof createInstruments>;

export function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}
