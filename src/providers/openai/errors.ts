import { upstreamStatusError, type GatewayError } from '../../errors';
import { retryAfterSeconds, textBody, type UpstreamHeaders } from '../shared/http';

/** `{error:{message,code,type}}` (OpenAI and most compatible servers), or a plain string body. */
export function errorFromBody(provider: string, status: number, body: unknown, retryAfter?: number): GatewayError {
  let message = textBody(body);
  let code: string | undefined;
  if (body && typeof body === 'object') {
    const err = (body as { error?: unknown }).error;
    if (err && typeof err === 'object') {
      const e = err as { message?: unknown; code?: unknown };
      if (typeof e.message === 'string') message = e.message;
      if (typeof e.code === 'string' && e.code === 'context_length_exceeded') code = e.code;
    } else if (typeof err === 'string') message = err;
    else if (typeof (body as { message?: unknown }).message === 'string')
      message = (body as { message: string }).message;
  }
  return upstreamStatusError(provider, status, message, code, retryAfter);
}

export function mapOpenAIError(
  status: number,
  body: unknown,
  headers: UpstreamHeaders,
  provider: string,
): GatewayError {
  return errorFromBody(provider, status, body, retryAfterSeconds(headers));
}
