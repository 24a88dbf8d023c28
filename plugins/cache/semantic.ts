/**
 * @module
 * The semantic cache (opt-in per model, off by default): the prompt's text is embedded through one of the gateway's
 * own embeddings models, by a request to this very gateway with the operator's key (so it goes through auth, limits,
 * credit and routing, and is metered to the operator's account); the nearest stored prompt of the same scope, model
 * and parameters above `threshold` (cosine) is a hit on its entry. Vectors are kept in this process (every backend:
 * pgvector was not available where this was built; a replica sees the vectors of the answers it stored itself), at
 * most `max_entries` per replica, oldest dropped first. A false hit answers another question: see the guide.
 */
import { createHash } from 'node:crypto';
import type { GatewayContext, GatewayState } from '../../src/plugin';
import { canonical } from './key';

export interface SemanticConfig {
  models: string[];
  embeddings_model: string;
  api_key: string;
  threshold: number;
  max_entries: number;
}

interface Vector {
  v: Float32Array;
  entry: string;
  expiresAt: number;
}

const NOT_PARAMS = new Set(['model', 'stream', 'stream_options', 'user', 'metadata', 'store', 'messages', 'input']);

/** What a semantic neighbour must share: endpoint, model, scope and every parameter but the messages. */
export function paramsKey(s: GatewayState, account: string | null): string {
  const h = createHash('sha256');
  h.update(`v1\n${s.operation}\n${s.model.id}\n${account ?? '*'}\n`);
  h.update(canonical(s.request, NOT_PARAMS));
  h.update(canonical(s.options, new Set(['timeoutMs', 'metadata'])));
  return h.digest('hex');
}

/** The prompt as text: each message's role and its text parts. */
export function promptText(s: GatewayState): string {
  return s.request.messages
    .map((m) => {
      const c = m.content;
      const text =
        typeof c === 'string'
          ? c
          : Array.isArray(c)
            ? c.map((p) => (p.type === 'text' && typeof p.text === 'string' ? p.text : '')).join('')
            : '';
      return `${m.role}: ${text}`;
    })
    .join('\n');
}

function normalized(xs: number[]): Float32Array {
  let n = 0;
  for (const x of xs) n += x * x;
  const r = Math.sqrt(n) || 1;
  return Float32Array.from(xs, (x) => x / r);
}

export class SemanticIndex {
  private readonly byParams = new Map<string, Vector[]>();
  private count = 0;

  constructor(private readonly maxEntries: number) {}

  /** The stored entry nearest to `v` among those of `params`, if its cosine is at least `threshold`. */
  nearest(params: string, v: Float32Array, threshold: number, now: number) {
    let best: { entry: string; similarity: number } | undefined;
    for (const x of this.byParams.get(params) ?? []) {
      if (x.expiresAt <= now) continue;
      let dot = 0;
      for (let i = 0; i < v.length && i < x.v.length; i++) dot += v[i] * x.v[i];
      if (dot >= threshold && (!best || dot > best.similarity)) best = { entry: x.entry, similarity: dot };
    }
    return best;
  }

  add(params: string, v: Float32Array, entry: string, expiresAt: number): void {
    const list = this.byParams.get(params) ?? [];
    if (!this.byParams.has(params)) this.byParams.set(params, list);
    list.push({ v, entry, expiresAt });
    if (++this.count > this.maxEntries) this.evictOne();
  }

  private evictOne(): void {
    for (const [k, list] of this.byParams) {
      list.shift();
      this.count--;
      if (list.length === 0) this.byParams.delete(k);
      return;
    }
  }
}

/**
 * The prompt's embedding through this gateway's own /v1/embeddings (its port from the request's socket), with the
 * operator's key: routed, limited and metered as any request.
 */
export async function embed(ctx: GatewayContext, config: SemanticConfig, text: string): Promise<Float32Array> {
  const port = ctx.req.socket.localPort;
  const r = await fetch(`http://127.0.0.1:${port}/v1/embeddings`, {
    method: 'POST',
    headers: { authorization: `Bearer ${config.api_key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: config.embeddings_model, input: text }),
    signal: AbortSignal.timeout(10_000),
  });
  if (r.status !== 200) throw new Error(`embeddings model answered ${r.status}`);
  const body = (await r.json()) as { data?: Array<{ embedding?: unknown }> };
  const e = body.data?.[0]?.embedding;
  if (!Array.isArray(e) || e.length === 0 || !e.every((x) => typeof x === 'number'))
    throw new Error('embeddings model answered no vector');
  return normalized(e as number[]);
}
