import { upstreamStatusError, type GatewayError } from '../../errors';
import { isRecord } from '../shared';
import { textBody, type UpstreamHeaders } from '../shared/http';

/** Status of an exception event inside a ConverseStream (which has no HTTP status of its own). */
export const EXCEPTION_STATUS: Record<string, number> = {
  throttlingException: 429,
  validationException: 400,
  modelStreamErrorException: 502,
  internalServerException: 500,
  serviceUnavailableException: 503,
  modelTimeoutException: 504,
  accessDeniedException: 403,
};

/** `{message}` (or `{Message}`), else the body's text, else the exception type. */
export function bedrockError(provider: string, status: number, body: unknown, type?: string): GatewayError {
  const text = isRecord(body) ? (body.message ?? body.Message) : undefined;
  const message = typeof text === 'string' ? text : typeof body === 'string' ? textBody(body) : (type ?? '');
  const code = /too long|too many (input )?tokens|context length/i.test(message)
    ? 'context_length_exceeded'
    : undefined;
  return upstreamStatusError(provider, status, message, code);
}

export function mapBedrockError(
  status: number,
  body: unknown,
  headers: UpstreamHeaders,
  provider: string,
): GatewayError {
  return bedrockError(provider, status, body, String(headers['x-amzn-errortype'] ?? ''));
}
