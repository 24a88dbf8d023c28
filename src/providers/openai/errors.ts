import { upstreamStatusError, type GatewayError } from '../../errors';

/** Seconds from a Retry-After header (delta-seconds or HTTP date). */
export function retryAfterSeconds(headers: Record<string, string | string[] | undefined>): number | undefined {
  const raw = headers['retry-after'];
  const v = Array.isArray(raw) ? raw[0] : raw;
  if (!v) return undefined;
  const n = Number(v);
  if (Number.isFinite(n) && n >= 0) return n;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : Math.max(0, (t - Date.now()) / 1000);
}

/** `{error:{message,code,type}}` (OpenAI and most compatible servers), or a plain string body. */
export function errorFromBody(provider: string, status: number, body: unknown, retryAfter?: number): GatewayError {
  let message = '';
  let code: string | undefined;
  if (typeof body === 'string') message = body.slice(0, 300);
  else if (body && typeof body === 'object') {
    const err = (body as { error?: unknown }).error;
    if (err && typeof err === 'object') {
      const e = err as { message?: unknown; code?: unknown };
      if (typeof e.message === 'string') message = e.message;
      if (typeof e.code === 'string' && e.code === 'context_length_exceeded') code = e.code;
    } else if (typeof err === 'string') message = err;
    else if (typeof (body as { message?: unknown }).message === 'string') message = (body as { message: string }).message;
  }
  return upstreamStatusError(provider, status, message, code, retryAfter);
}

export function mapOpenAIError(status: number, body: unknown, headers: Record<string, string | string[] | undefined>, provider: string): GatewayError {
  return errorFromBody(provider, status, body, retryAfterSeconds(headers));
}
