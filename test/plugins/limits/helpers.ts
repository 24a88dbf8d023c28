import type { ServerResponse } from 'node:http';
import { writeSse, openaiFixtures, type MockUpstream } from '../../helpers/mock-upstream';

/** A model on an OpenAI-compatible loopback upstream (zero price, so credit never gets in the way). */
export function upstreamModel(id: string, provider: string): Record<string, unknown> {
  return {
    id,
    owned_by: provider,
    created: 1715367049,
    context_length: 8000,
    pricing: { prompt: 0, completion: 0 },
    deployments: [{ provider, model: 'gpt-4o-mini' }],
  };
}

export function upstreamProvider(name: string, upstream: MockUpstream): Record<string, unknown> {
  return { name, type: 'openai', api_base: `${upstream.url}/v1`, api_key: 'sk-upstream-secret-123' };
}

/** Counts requests open at the upstream at once (the most seen), released when the response closes. */
export class OpenCounter {
  open = 0;
  max = 0;
  enter(res: ServerResponse): void {
    this.open++;
    this.max = Math.max(this.max, this.open);
    res.once('close', () => this.open--);
  }
}

/** An OpenAI stream: a first chunk at once (so headers reach the client), the rest after `hold` resolves. */
export async function heldStream(res: ServerResponse, hold: Promise<unknown>, completion = 3): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.write(`data: ${JSON.stringify(openaiFixtures.chunk({ role: 'assistant', content: 'a' }))}\n\n`);
  await hold;
  if (res.destroyed) return;
  res.write(`data: ${JSON.stringify(openaiFixtures.chunk({}, 'stop'))}\n\n`);
  res.write(`data: ${JSON.stringify(openaiFixtures.usageChunk(10, completion))}\n\n`);
  res.end('data: [DONE]\n\n');
}

export { writeSse };

/** A deferred: `release()` resolves `promise`. */
export function gate(): { promise: Promise<void>; release: () => void } {
  let release!: () => void;
  const promise = new Promise<void>((r) => (release = r));
  return { promise, release };
}

export const RATE_HEADERS = [
  'x-ratelimit-limit-requests',
  'x-ratelimit-remaining-requests',
  'x-ratelimit-reset-requests',
];
export const TOKEN_HEADERS = ['x-ratelimit-limit-tokens', 'x-ratelimit-remaining-tokens', 'x-ratelimit-reset-tokens'];
