/**
 * @module
 * The tracing plugin's YAML section: its type, and the JSON Schema the loader checks it with.
 */

export interface TracingConfig {
  /**
   * OTLP/HTTP traces endpoint; default: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT +
   * /v1/traces.
   */
  endpoint?: string;
  /** Extra export headers (e.g. an API key of the collector); default from OTEL_EXPORTER_OTLP_HEADERS. */
  headers: Record<string, string>;
  /** Default: OTEL_SERVICE_NAME, else model-gateway. */
  service_name?: string;
  /** Put prompts and answers on spans (gen_ai.input.messages / gen_ai.output.messages). Off by default. */
  capture_content: boolean;
  /** Fraction of new traces sampled (a client's sampled traceparent is always followed). */
  sample_ratio: number;
}

export const configSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    endpoint: { type: 'string', pattern: '^https?://' },
    headers: { type: 'object', additionalProperties: { type: 'string' }, default: {} },
    service_name: { type: 'string', minLength: 1 },
    capture_content: { type: 'boolean', default: false },
    sample_ratio: { type: 'number', minimum: 0, maximum: 1, default: 1 },
  },
};
