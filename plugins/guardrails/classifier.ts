/**
 * @module
 * The optional classifier: the request's text (after redaction: it sees placeholders, never the values) sent to a
 * model the operator names, through this gateway's own chat endpoint, so its routing, adapters, limits and credit
 * apply and the call is metered to the operator's key. Bounded by a timeout; what happens when it does not answer is
 * the policy's (`on_error`).
 */
import type { GatewayContext } from '../../src/plugin';
import type { ClassifierConfig } from './schema';

export type Verdict = 'safe' | 'unsafe' | 'error';

/** Where this gateway answers, as the request came in (a loopback call to itself) unless configured. */
function baseUrl(ctx: GatewayContext, config: ClassifierConfig): string {
  if (config.base_url) return config.base_url.replace(/\/+$/, '');
  const { localAddress, localPort } = ctx.req.socket;
  const addr = (localAddress ?? '127.0.0.1').replace(/^::ffff:/, '');
  return `http://${addr.includes(':') ? `[${addr}]` : addr}:${localPort}`;
}

export class Classifier {
  private readonly unsafe: RegExp;

  constructor(private readonly config: ClassifierConfig) {
    this.unsafe = new RegExp(config.unsafe, 'i');
  }

  /** Whether a request is the classifier's own call (never classified again). */
  isOwn(modelId: string): boolean {
    return modelId === this.config.model;
  }

  async classify(ctx: GatewayContext, text: string): Promise<Verdict> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.config.api_key) headers.authorization = `Bearer ${this.config.api_key}`;
    try {
      const res = await fetch(`${baseUrl(ctx, this.config)}/v1/chat/completions`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          model: this.config.model,
          messages: [
            { role: 'system', content: this.config.prompt },
            { role: 'user', content: text },
          ],
          max_tokens: 8,
          temperature: 0,
        }),
        signal: AbortSignal.timeout(this.config.timeout_ms),
      });
      if (!res.ok) return 'error';
      const body = (await res.json()) as { choices?: Array<{ message?: { content?: unknown } }> };
      const answer = body.choices?.[0]?.message?.content;
      if (typeof answer !== 'string') return 'error';
      return this.unsafe.test(answer) ? 'unsafe' : 'safe';
    } catch {
      return 'error';
    }
  }
}
