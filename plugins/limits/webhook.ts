import { createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';

export interface WebhookOptions {
  url: string;
  secret: string;
  max_attempts: number;
  backoff_ms: number;
  timeout_ms: number;
}

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`: the receiver recomputes it and checks t is recent. */
export function signature(secret: string, body: string, unixSeconds: number): string {
  return `t=${unixSeconds},v1=${createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')}`;
}

/**
 * POST a signed JSON event; retried with exponential backoff on a network error, a 5xx
 * or a 429, up to max_attempts. Resolves true once delivered. Callers do not await it on
 * a request's path.
 */
export async function deliverWebhook(
  o: WebhookOptions,
  event: Record<string, unknown>,
  logger: Logger,
): Promise<boolean> {
  const body = JSON.stringify(event);
  for (let attempt = 1; attempt <= o.max_attempts; attempt++) {
    let status = 0;
    try {
      const res = await fetch(o.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-gateway-signature': signature(o.secret, body, Math.floor(Date.now() / 1000)),
          'x-gateway-event': String(event.type),
        },
        body,
        signal: AbortSignal.timeout(o.timeout_ms),
      });
      status = res.status;
      await res.body?.cancel();
      if (status < 300) return true;
      if (status < 500 && status !== 429) break;
    } catch {
      status = 0;
    }
    if (attempt < o.max_attempts) await sleep(Math.min(o.backoff_ms * 2 ** (attempt - 1), 60_000));
    else logger.warn({ event: event.type, status, attempts: attempt }, 'limits: budget webhook not delivered');
  }
  return false;
}
