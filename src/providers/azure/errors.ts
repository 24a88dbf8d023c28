import { upstreamStatusError, type GatewayError } from '../../errors';
import { isRecord } from '../shared';
import { retryAfterSeconds, type UpstreamHeaders } from '../shared/http';
import { mapOpenAIError } from '../openai/errors';

/** Azure's content filter refusals (400 code content_filter) keep their code; the rest as OpenAI's. */
export function mapAzureError(status: number, body: unknown, headers: UpstreamHeaders, provider: string): GatewayError {
  const e = isRecord(body) && isRecord(body.error) ? body.error : undefined;
  if (e?.code === 'content_filter') {
    const message = String(e.message ?? 'content filtered');
    return upstreamStatusError(provider, status, message, 'content_filter', retryAfterSeconds(headers));
  }
  return mapOpenAIError(status, body, headers, provider);
}
