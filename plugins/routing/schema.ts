/**
 * @module
 * The routing plugin's YAML section: its type, and the JSON Schema the loader checks it with.
 */

export interface RoutingConfig {
  /** Longest silence between two chunks of an upstream stream. */
  stream_idle_timeout_ms: number;
  /** Largest plain (non-streamed) upstream answer, bytes: beyond it, 502 upstream_response_too_large. */
  max_response_bytes: number;
  /** Largest single stream line (SSE, NDJSON) or frame (AWS event stream), bytes: beyond it, an error event. */
  max_event_bytes: number;
  /** Headers a client may forward upstream (`headers` / `extra_headers`): how many, and their total bytes. */
  max_forwarded_headers: number;
  max_forwarded_header_bytes: number;
  /**
   * Each deployment's measured latency and throughput (provider.sort, :nitro), shared across replicas: published at
   * most every publish_ms per deployment, read from the others when older than refresh_ms.
   */
  measures: { publish_ms: number; refresh_ms: number };
  /** How often the admin API's presets are read again from the store (another replica's changes). */
  presets_refresh_ms: number;
}

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    stream_idle_timeout_ms: { type: 'integer', minimum: 1, default: 120000 },
    max_response_bytes: { type: 'integer', minimum: 1024, default: 16 * 1024 * 1024 },
    max_event_bytes: { type: 'integer', minimum: 1024, default: 4 * 1024 * 1024 },
    max_forwarded_headers: { type: 'integer', minimum: 0, maximum: 1000, default: 32 },
    max_forwarded_header_bytes: { type: 'integer', minimum: 0, default: 8192 },
    measures: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        publish_ms: { type: 'integer', minimum: 10, default: 1000 },
        refresh_ms: { type: 'integer', minimum: 10, default: 1000 },
      },
    },
    presets_refresh_ms: { type: 'integer', minimum: 100, default: 5000 },
  },
};
