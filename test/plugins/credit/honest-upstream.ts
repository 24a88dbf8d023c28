import type { ServerResponse } from 'node:http';
import { MockUpstream, openaiFixtures, sendJson, writeSse, type RecordedRequest } from '../../helpers/mock-upstream';

type Body = Record<string, unknown> & {
  messages?: Array<{ role?: string; content?: unknown }>;
  n?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
};

const bytes = (s: unknown) => (typeof s === 'string' ? Buffer.byteLength(s, 'utf8') : 0);

/** Image tokens by OpenAI's documented rules: gpt-4o (85 + 8 tiles x 170) and gpt-4o-mini (2,833 + 8 tiles x 5,667). */
const IMAGE = { 'gpt-4o': { low: 85, high: 1445 }, 'gpt-4o-mini': { low: 2833, high: 48169 } } as const;
export const AUDIO_TOKENS = 1500;

/** The price of the models the credit tests put on the honest upstream (credits per token). */
export const HONEST_PRICE = { prompt: 0.00001, completion: 0.00003 };

/** A model on the honest upstream (provider `up`, upstream model `upstream`) at HONEST_PRICE, unless `extra` says. */
export function honestModel(id: string, upstream: string, extra: Record<string, unknown> = {}) {
  return {
    id,
    owned_by: 'up',
    context_length: 128000,
    pricing: HONEST_PRICE,
    deployments: [{ provider: 'up', model: upstream }],
    ...extra,
  };
}

/**
 * The most an honest OpenAI-style provider can count for a request: one token per UTF-8
 * byte of text (a byte-level BPE can do no worse), chat framing (3 per message, 3 to prime
 * the reply), tool and response_format schemas at their JSON size, images by the documented
 * rule of the model, and every choice using its whole output allowance.
 */
export function worstHonestUsage(
  body: Body,
  upstreamModel: string,
): { prompt_tokens: number; completion_tokens: number; total_tokens: number } {
  const image = upstreamModel.includes('mini') ? IMAGE['gpt-4o-mini'] : IMAGE['gpt-4o'];
  let prompt = 3;
  for (const m of body.messages ?? []) {
    prompt += 3 + 1;
    if (typeof m.content === 'string') prompt += bytes(m.content);
    else if (Array.isArray(m.content)) {
      for (const p of m.content as Array<Record<string, unknown>>) {
        if (p.type === 'text') prompt += bytes(p.text);
        else if (p.type === 'image_url')
          prompt += (p.image_url as { detail?: string }).detail === 'low' ? image.low : image.high;
        else if (p.type === 'input_audio') prompt += AUDIO_TOKENS;
      }
    }
  }
  if (body.tools) prompt += bytes(JSON.stringify(body.tools));
  if (body.response_format) prompt += bytes(JSON.stringify(body.response_format));
  const perChoice = body.max_completion_tokens ?? body.max_tokens ?? 16;
  const completion = perChoice * (body.n ?? 1);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

const LIES: Record<string, unknown> = {
  huge: { prompt_tokens: 1_000_000, completion_tokens: 1_000_000, total_tokens: 2_000_000 },
  negative: { prompt_tokens: -100_000_000, completion_tokens: 5, total_tokens: -99_999_995 },
  inf: { prompt_tokens: 1e308, completion_tokens: 1e308, total_tokens: 1e308 },
  string: { prompt_tokens: '1e9', completion_tokens: 5, total_tokens: '1e9' },
};

function answer(
  res: ServerResponse,
  body: Body,
  usage: unknown,
  opts: { delayMs?: number; chunks?: number } = {},
): Promise<void> | void {
  const n = body.n ?? 1;
  if (body.stream === true) {
    const pieces = Array.from({ length: opts.chunks ?? 2 }, (_, i) =>
      openaiFixtures.chunk(i === 0 ? { role: 'assistant', content: 'ok' } : { content: ' ok' }),
    );
    return writeSse(res, [...pieces, openaiFixtures.chunk({}, 'stop'), { ...openaiFixtures.usageChunk(0, 0), usage }], {
      delayMs: opts.delayMs,
    });
  }
  const c = openaiFixtures.completion('ok');
  c.choices = Array.from({ length: n }, (_, index) => ({ ...c.choices[0], index }));
  sendJson(res, 200, { ...c, usage });
}

/** The most an honest provider can count for embeddings inputs: a byte per token of text, a token array at its length. */
export function worstEmbeddingTokens(input: unknown): number {
  const list = Array.isArray(input) && !input.every((x) => typeof x === 'number') ? input : [input];
  return list.reduce((n: number, x) => n + (typeof x === 'string' ? bytes(x) : Array.isArray(x) ? x.length : 0), 0);
}

/** An OpenAI embeddings answer (one 3-dimension vector per input) with the worst honest count, or a lie. */
function embeddings(res: ServerResponse, body: Body & { input?: unknown }, model: string): void {
  const inputs =
    Array.isArray(body.input) && !body.input.every((x) => typeof x === 'number') ? body.input : [body.input];
  const tokens = worstEmbeddingTokens(body.input);
  const lie = model.startsWith('liar-')
    ? (LIES[model.slice('liar-'.length)] as { prompt_tokens: unknown; total_tokens: unknown })
    : null;
  const usage = lie
    ? { prompt_tokens: lie.prompt_tokens, total_tokens: lie.total_tokens }
    : { prompt_tokens: tokens, total_tokens: tokens };
  sendJson(res, 200, {
    object: 'list',
    data: inputs.map((_, index) => ({ object: 'embedding', index, embedding: [0.6, 0.8, 0] })),
    model,
    usage,
  });
}

/**
 * An OpenAI-format upstream whose behaviour is chosen by the deployment's model name:
 * `gpt-4o` / `gpt-4o-mini` count honestly at the worst the rules allow, `fail` answers 500,
 * `flaky` fails a conversation's first two attempts, `liar-<kind>` reports absurd usage,
 * `slow` streams 40 chunks 20 ms apart. `/v1/embeddings` counts the worst honest way too (`liar-<kind>` lies).
 */
export function honestUpstream(): MockUpstream {
  const up = new MockUpstream();
  const tries = new Map<string, number>();
  up.handler = (req: RecordedRequest, res) => {
    const body = req.json as Body;
    const model = String(body.model);
    if (req.path.endsWith('/embeddings')) return embeddings(res, body, model);
    const honest = worstHonestUsage(body, model);
    if (model === 'fail')
      return sendJson(res, 500, { error: { message: 'upstream down', type: 'server_error', code: null, param: null } });
    if (model === 'flaky') {
      const id = JSON.stringify(body.messages);
      const n = (tries.get(id) ?? 0) + 1;
      tries.set(id, n);
      if (n <= 2)
        return sendJson(res, 503, { error: { message: 'overloaded', type: 'server_error', code: null, param: null } });
    }
    if (model.startsWith('liar-')) return answer(res, body, LIES[model.slice('liar-'.length)]);
    if (model === 'slow') return answer(res, body, honest, { delayMs: 20, chunks: 40 });
    return answer(res, body, honest);
  };
  return up;
}
