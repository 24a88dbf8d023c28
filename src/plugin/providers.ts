/**
 * The public plugin API, part "calling providers": what the plan executor (the routing plugin) and any other
 * terminal plugin use to call an upstream through the configured adapters: the adapter registry, the transport, the
 * stream parsers, the headers a client may forward, and secret redaction for upstream errors. Re-exports only.
 */
export { getAdapter, providerTypeNames, supportedParamsOf } from '../providers/registry';
export { getEmbeddingsMapping, type UpstreamAnswer } from '../providers/embeddings';
export type { Transport, UpstreamResponse } from '../transport/http';
export { SizeLimitError } from '../transport/limits';
export { NdjsonParser, SseParser, type EventParser } from '../transport/sse';
export { AwsEventStreamParser } from '../transport/aws-eventstream';
export { forwardableHeaders } from '../security/headers';
export { providerSecrets, redactSecrets } from '../security/redact';
export { chunkCount, frameOf, nativeErrorOf, withFrame, withNativeError } from '../providers/same-wire';
