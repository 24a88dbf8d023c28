import type { ServerResponse } from 'node:http';
import { MESSAGES_GATEWAY_FIELDS } from './request';
import type Koa from 'koa';
import { toAnthropicError, type GatewayError } from '../../errors';
import { headList } from '../../http/response-head';
import { frameOf, nativeErrorOf } from '../../providers/same-wire';
import type { SameWireRequest } from '../../providers/types';
import type { StreamFramer } from '../../stream/sse-writer';
import type { ChatCompletionChunk } from '../../types/openai';
import { ev } from './events';

/** The client's headers of Anthropic's wire that a passthrough forwards as they came. */
const WIRE_HEADERS = ['anthropic-version', 'anthropic-beta'] as const;

/** The client's Messages request as it sent it, kept for an attempt on an adapter that speaks it (same wire). */
export function anthropicInbound(ctx: Koa.Context, sent: Record<string, unknown>, count = false): SameWireRequest {
  // The gateway's own fields (fallbacks, timeout, ...) are the gateway's: they never reach the provider.
  const body: Record<string, unknown> = {};
  for (const k of Object.keys(sent)) if (!MESSAGES_GATEWAY_FIELDS.has(k)) body[k] = sent[k];
  const headers: Record<string, string> = {};
  for (const h of WIRE_HEADERS) {
    const v = ctx.get(h);
    if (v) headers[h] = v;
  }
  return count ? { wire: 'anthropic-messages', body, headers, count } : { wire: 'anthropic-messages', body, headers };
}

/**
 * A passthrough stream as the client gets it: each chunk is written as the upstream events that produced it, their
 * bytes as they came (message_start, ping, content blocks, message_delta, message_stop: nothing is made here); an
 * error the upstream sent is its own error event, one the gateway ends the stream with is Anthropic's error event.
 */
export class SameWireEvents implements StreamFramer {
  start(): string {
    return '';
  }

  chunk(chunk: ChatCompletionChunk): string {
    return frameOf(chunk) ?? '';
  }

  async end(): Promise<string> {
    return '';
  }

  async error(e: GatewayError): Promise<string> {
    return nativeErrorOf(e) ?? ev('error', toAnthropicError(e));
  }
}

/** A passthrough's plain answer: the upstream's bytes, with the gateway's headers. */
export function writeNative(res: ServerResponse, requestId: string, headers: Record<string, string>, bytes: Buffer) {
  const body = { 'Content-Type': 'application/json', 'Content-Length': String(bytes.length) };
  res.writeHead(200, headList({ 'X-Request-Id': requestId }, headers, body));
  res.end(bytes);
}
