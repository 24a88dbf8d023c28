import { upstreamStatusError, type GatewayError } from '../../errors';
import { isRecord } from '../shared';
import { retryAfterSeconds, textBody, type UpstreamHeaders } from '../shared/http';

/** `{error:{code,message,status}}` (or a list of them); a prompt over the limit is context_length_exceeded. */
export function geminiError(provider: string, status: number, body: unknown, retryAfter?: number): GatewayError {
  const first = Array.isArray(body) ? body[0] : undefined;
  const e =
    isRecord(body) && isRecord(body.error)
      ? body.error
      : isRecord(first) && isRecord(first.error)
        ? first.error
        : undefined;
  const message = typeof e?.message === 'string' ? e.message : textBody(body);
  const code = /exceeds the maximum number of tokens|input token count/i.test(message)
    ? 'context_length_exceeded'
    : undefined;
  return upstreamStatusError(provider, status, message, code, retryAfter);
}

export function mapGeminiError(
  status: number,
  body: unknown,
  headers: UpstreamHeaders,
  provider: string,
): GatewayError {
  return geminiError(provider, status, body, retryAfterSeconds(headers));
}
