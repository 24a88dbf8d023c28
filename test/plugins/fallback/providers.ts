/**
 * Four loopback upstreams standing for four providers of one model, each with its own price, latency and throughput
 * (issue 46), and the config that serves them. Shared by the provider-routing tests (one gateway and two replicas).
 */
import type { ServerResponse } from 'node:http';
import { MockUpstream, openaiFixtures, sendJson, writeSse, type RecordedRequest } from '../../helpers/mock-upstream';

/**
 * Prices are credits per token (per million: x 1e6); delays in ms; output tokens per answer. Latency order: fast <
 * dear < bulk < cheap. Throughput order (tokens over the answer's time): bulk > fast > dear > cheap. Price order:
 * cheap < bulk < fast < dear. Only `dear` promises not to keep prompts (data_collection: deny).
 */
export const PROVIDERS = {
  cheap: { prompt: 1e-6, completion: 2e-6, delayMs: 400, tokens: 10 },
  fast: { prompt: 3e-6, completion: 6e-6, delayMs: 2, tokens: 10 },
  bulk: { prompt: 2e-6, completion: 4e-6, delayMs: 250, tokens: 8000 },
  dear: { prompt: 5e-6, completion: 10e-6, delayMs: 150, tokens: 10 },
} as const;
export type Name = keyof typeof PROVIDERS;
export const NAMES = Object.keys(PROVIDERS) as Name[];
export const PROMPT_TOKENS = 19;

/** What an answer from `name` costs, in credits: its own deployment's prices, not the model's. */
export function costOf(name: Name): number {
  const p = PROVIDERS[name];
  return PROMPT_TOKENS * p.prompt + p.tokens * p.completion;
}

export interface Upstreams {
  ups: Record<Name, MockUpstream>;
  /** Which upstream each call reached, in order. */
  calls: Name[];
  /** Upstreams that answer 503 until taken off the list. */
  failing: Set<Name>;
  /** Upstreams that answer with no output and no finish reason (zero-completion insurance). */
  empty: Set<Name>;
  /** Upstreams that answer in full but report no output tokens and no finish reason (insurance must not cover it). */
  lying: Set<Name>;
  stop(): Promise<void>;
}

function answer(name: Name, u: Upstreams) {
  return async (req: RecordedRequest, res: ServerResponse) => {
    u.calls.push(name);
    const p = PROVIDERS[name];
    await new Promise((r) => setTimeout(r, p.delayMs));
    if (u.failing.has(name)) return sendJson(res, 503, { error: { message: `${name} is down` } });
    const empty = u.empty.has(name);
    const lying = u.lying.has(name);
    if ((req.json as { stream?: boolean }).stream === true) return streamAnswer(res, name, empty);
    sendJson(res, 200, {
      id: `chatcmpl-${name}`,
      object: 'chat.completion',
      created: 1741569952,
      model: `${name}-model`,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: empty ? '' : `from ${name}` },
          finish_reason: empty || lying ? null : 'stop',
        },
      ],
      usage: {
        prompt_tokens: PROMPT_TOKENS,
        completion_tokens: empty || lying ? 0 : p.tokens,
        total_tokens: PROMPT_TOKENS + (empty || lying ? 0 : p.tokens),
      },
    });
  };
}

/** A streamed answer: role, content (none when `empty`), finish (none when `empty`), then the usage chunk. */
function streamAnswer(res: ServerResponse, name: Name, empty: boolean): Promise<void> {
  const tokens = empty ? 0 : PROVIDERS[name].tokens;
  const usage = { prompt_tokens: PROMPT_TOKENS, completion_tokens: tokens, total_tokens: PROMPT_TOKENS + tokens };
  return writeSse(res, [
    openaiFixtures.chunk({ role: 'assistant', content: '' }),
    ...(empty ? [] : [openaiFixtures.chunk({ content: `from ${name}` }), openaiFixtures.chunk({}, 'stop')]),
    { ...openaiFixtures.chunk({}), choices: [], usage },
  ]);
}

export async function startUpstreams(): Promise<Upstreams> {
  const u = { calls: [], failing: new Set(), empty: new Set(), lying: new Set() } as unknown as Upstreams;
  const ups = {} as Record<Name, MockUpstream>;
  for (const n of NAMES) {
    ups[n] = await new MockUpstream().start();
    ups[n].handler = answer(n, u);
  }
  u.ups = ups;
  u.stop = async () => {
    for (const n of NAMES) await ups[n].stop();
  };
  return u;
}

/** Providers, the model on all four (each deployment with its own price) and a cheap model only `cheap` serves. */
export function routingConfig(u: Upstreams) {
  return {
    providers: NAMES.map((n) => ({
      name: n,
      type: 'openai',
      api_base: `${u.ups[n].url}/v1`,
      ...(n === 'dear' ? { data_collection: 'deny' } : {}),
    })),
    models: [
      {
        id: 'm/multi',
        // The model's own price is none of its deployments': a charge at it would show.
        pricing: { prompt: 9e-6, completion: 9e-6 },
        deployments: NAMES.map((n) => ({
          provider: n,
          model: `${n}-model`,
          pricing: { prompt: PROVIDERS[n].prompt, completion: PROVIDERS[n].completion },
        })),
      },
      {
        id: 'm/other',
        pricing: { prompt: 1e-6, completion: 1e-6 },
        deployments: [{ provider: 'cheap', model: 'other-model' }],
      },
    ],
  };
}
