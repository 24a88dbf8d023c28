import { upstreamStatusError, type GatewayError } from '../../errors';
import { isRecord } from '../shared';
import { retryAfterSeconds, textBody, type UpstreamHeaders } from '../shared/http';

/** `{type: error, error: {type, message}}`; a too-long prompt is context_length_exceeded. */
export function anthropicError(provider: string, status: number, body: unknown, retryAfter?: number): GatewayError {
  const e = isRecord(body) && isRecord(body.error) ? body.error : undefined;
  const message = typeof e?.message === 'string' ? e.message : textBody(body);
  const code = /prompt is too long/i.test(message) ? 'context_length_exceeded' : undefined;
  // 529 overloaded_error: a 5xx, retryable.
  return upstreamStatusError(provider, status === 400 && code ? 400 : status, message, code, retryAfter);
}

export function mapAnthropicError(
  status: number,
  body: unknown,
  headers: UpstreamHeaders,
  provider: string,
): GatewayError {
  return anthropicError(provider, status, body, retryAfterSeconds(headers));
}

/** Status of an `error` event inside a stream (which has no HTTP status of its own). */
const STREAM_ERROR_STATUS: Record<string, number> = {
  overloaded_error: 529,
  rate_limit_error: 429,
  invalid_request_error: 400,
};

export function streamError(provider: string, event: Record<string, unknown>): GatewayError {
  const e = event.error as Record<string, unknown> | undefined;
  return anthropicError(provider, STREAM_ERROR_STATUS[String(e?.type)] ?? 500, event);
}
