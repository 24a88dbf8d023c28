/**
 * @module
 * Every metric the metrics plugin declares, by group, registered once at setup in the order `/metrics` lists them.
 * Label values come from config (models, providers), never from the request.
 */
import { Counter, Gauge, type Registry } from '../../src/plugin';
import { FastCounter } from './fast-counter';
import { FastHistogram } from './fast-histogram';

/** Latency buckets (seconds) from 0.1 ms to 60 s: gateway overhead sits at the low end, upstreams at the high end. */
export const LATENCY_BUCKETS = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];
const FAST_BUCKETS = [0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05];

/** Requests: chat requests by outcome (and key, when asked), HTTP requests by route pattern. */
function trafficMetrics(registry: Registry, keyLabel: boolean) {
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
  };
}

/** Latency histograms: what the gateway adds, the whole request, upstream attempts, first token, between chunks. */
function latencyMetrics(registry: Registry) {
  const histogram = (name: string, help: string, labels: string[]) =>
    new FastHistogram(name, help, labels, LATENCY_BUCKETS, registry);
  return {
    added: histogram(
      'gateway_added_latency_seconds',
      'Time the gateway adds to a request (total, or to the first streamed byte, minus upstream time)',
      ['model'],
    ),
    duration: histogram('gateway_request_duration_seconds', 'Whole chat request time, to the last byte', [
      'model',
      'streamed',
    ]),
    upstream: histogram(
      'gateway_upstream_latency_seconds',
      'Upstream attempt time (to the answer, or to the first streamed content)',
      ['provider'],
    ),
    ttft: histogram('gateway_time_to_first_token_seconds', 'Time to the first streamed content', ['model']),
    interToken: histogram('gateway_inter_token_seconds', 'Time between streamed chunks', ['model']),
  };
}

/** Usage: tokens by type, credits charged. */
function usageMetrics(registry: Registry) {
  return {
    tokens: new FastCounter(
      'gateway_tokens_total',
      'Tokens by model and type (prompt, completion, cached, reasoning)',
      ['model', 'type'],
      registry,
    ),
    credits: new FastCounter('gateway_credits_charged_total', 'Credits charged', ['model'], registry),
  };
}

/** Upstream attempts: errors, outcomes, fan-out by key, retries and fallbacks. */
function attemptMetrics(registry: Registry) {
  const registers = [registry];
  return {
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
        'Attempts beyond the first of a request (retries, fallbacks; made or refused by a guard), ' +
        'by key hash prefix: a series only for keys whose requests fan out',
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
  };
}

/** Load: requests and streams in flight. */
function loadMetrics(registry: Registry) {
  const registers = [registry];
  return {
    inFlight: new Gauge({ name: 'gateway_requests_in_flight', help: 'Chat requests being handled', registers }),
    openStreams: new Gauge({ name: 'gateway_open_streams', help: 'Streams being written to clients', registers }),
  };
}

/** The gateway's own parts: each plugin's time, store operations and their failures. */
function internalMetrics(registry: Registry) {
  return {
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
      registers: [registry],
    }),
  };
}

/**
 * Every request metric, registered once, as one flat object (docs/decisions/0032-plugin-hot-path-shapes.md): the
 * groups are made in the order the metrics were always registered in.
 */
export function createInstruments(registry: Registry, keyLabel: boolean) {
  return {
    ...trafficMetrics(registry, keyLabel),
    ...latencyMetrics(registry),
    ...usageMetrics(registry),
    ...attemptMetrics(registry),
    ...loadMetrics(registry),
    ...internalMetrics(registry),
  };
}

export type Instruments = ReturnType<typeof createInstruments>;

export function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}
