import { upstreamStatusError, type GatewayError } from '../../errors';
import { isRecord } from '../shared';
import { textBody } from '../shared/http';

/** `{error: "..."}`, or a plain text body. */
export function ollamaError(provider: string, status: number, body: unknown): GatewayError {
  const message = isRecord(body) && typeof body.error === 'string' ? body.error : textBody(body);
  return upstreamStatusError(provider, status, message);
}
