import { upstreamStatusError, type GatewayError } from '../../errors';
import { isRecord } from '../shared';
import { retryAfterSeconds, textBody, type UpstreamHeaders } from '../shared/http';

/** `{message}`, or a plain text body; too many tokens is context_length_exceeded. */
export function cohereError(provider: string, status: number, body: unknown, retryAfter?: number): GatewayError {
  const message = isRecord(body) && typeof body.message === 'string' ? body.message : textBody(body);
  const code = /too many tokens|context length/i.test(message) ? 'context_length_exceeded' : undefined;
  return upstreamStatusError(provider, status, message, code, retryAfter);
}

export function mapCohereError(
  status: number,
  body: unknown,
  headers: UpstreamHeaders,
  provider: string,
): GatewayError {
  return cohereError(provider, status, body, retryAfterSeconds(headers));
}

/** finish_reason ERROR: the generation failed upstream. */
export function generationFailed(
  provider: string,
  message = 'the generation failed (finish_reason ERROR)',
): GatewayError {
  return cohereError(provider, 500, { message });
}
