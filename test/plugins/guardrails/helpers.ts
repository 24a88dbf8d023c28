import type { ServerResponse } from 'node:http';
import { testConfig } from '../../helpers/gateway';
import { MockUpstream, openaiFixtures, sendJson, writeSse, type RecordedRequest } from '../../helpers/mock-upstream';
import type { GatewayConfig } from '../../../src/config/types';

/** The text of the last user message the upstream got (chat), or every input string (embeddings). */
export function userText(req: RecordedRequest): string {
  const body = req.json as { messages?: Array<{ role: string; content: unknown }>; input?: unknown };
  if (body.input !== undefined) return JSON.stringify(body.input);
  const m = [...(body.messages ?? [])].reverse().find((x) => x.role === 'user');
  if (!m) return '';
  return typeof m.content === 'string' ? m.content : JSON.stringify(m.content);
}

/** An upstream that answers with what the user said: whole, or streamed `size` characters a chunk. */
export function echoUpstream(size = 3, prefix = 'You said: '): MockUpstream {
  const up = new MockUpstream();
  up.handler = async (req, res: ServerResponse) => {
    if (req.path.endsWith('/embeddings')) {
      const input = (req.json as { input: string[] }).input;
      return sendJson(res, 200, {
        object: 'list',
        data: input.map((_, index) => ({ object: 'embedding', index, embedding: [0.1, 0.2, 0.3] })),
        model: 'e',
        usage: { prompt_tokens: 4, total_tokens: 4 },
      });
    }
    const text = prefix + userText(req);
    const body = req.json as { stream?: boolean };
    if (!body.stream) return sendJson(res, 200, openaiFixtures.completion(text));
    const pieces: unknown[] = [openaiFixtures.chunk({ role: 'assistant', content: '' })];
    for (let i = 0; i < text.length; i += size) pieces.push(openaiFixtures.chunk({ content: text.slice(i, i + size) }));
    pieces.push(openaiFixtures.chunk({}, 'stop'), openaiFixtures.usageChunk(10, 10));
    await writeSse(res, pieces);
  };
  return up;
}

/** A chat model on a provider (default `up`). */
export const chatModel = (id: string, provider = 'up') => ({
  id,
  pricing: { prompt: 0.000001, completion: 0.000002 },
  deployments: [{ provider, model: 'm' }],
});

/**
 * A config with the upstream as model `up/m` (chat) and `up/e` (embeddings), the given chain; `also` adds providers
 * and models, `env` the environment (an admin key).
 */
export function guardConfig(
  upstream: MockUpstream,
  plugins: unknown[],
  also: { providers?: unknown[]; models?: unknown[] } = {},
  env: NodeJS.ProcessEnv = {},
): GatewayConfig {
  const up = { name: 'up', type: 'openai', api_base: `${upstream.url}/v1`, api_key: 'k' };
  const embed = {
    id: 'up/e',
    endpoints: ['embeddings'],
    pricing: { prompt: 0.000001, completion: 0 },
    deployments: [{ provider: 'up', model: 'e' }],
  };
  return testConfig(
    {
      providers: [up, ...(also.providers ?? [])],
      models: [chatModel('up/m'), embed, ...(also.models ?? [])],
      plugins,
    },
    env,
  );
}

/** A policy stanza with the checks given. */
export function policy(checks: Array<[string, 'input' | 'output' | 'both', 'block' | 'redact' | 'flag']>) {
  return { checks: checks.map(([detector, on, action]) => ({ detector, on, action })) };
}
