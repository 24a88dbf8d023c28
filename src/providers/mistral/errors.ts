import { upstreamStatusError, type GatewayError } from '../../errors';
import { isRecord } from '../shared';
import { retryAfterSeconds, type UpstreamHeaders } from '../shared/http';
import { mapOpenAIError } from '../openai/errors';

/** Mistral's errors: `{message: string | {detail: [...]}, type, code}` (422 validation), or OpenAI's `{error}`. */
export function mapMistralError(
  status: number,
  body: unknown,
  headers: UpstreamHeaders,
  provider: string,
): GatewayError {
  if (isRecord(body) && body.error === undefined && isRecord(body.message)) {
    const detail = Array.isArray(body.message.detail) ? (body.message.detail as Array<Record<string, unknown>>) : [];
    const text = detail.map((d) => `${Array.isArray(d.loc) ? d.loc.join('.') : ''}: ${String(d.msg ?? '')}`).join('; ');
    return upstreamStatusError(provider, status, text || 'invalid request', undefined, retryAfterSeconds(headers));
  }
  return mapOpenAIError(status, body, headers, provider);
}
