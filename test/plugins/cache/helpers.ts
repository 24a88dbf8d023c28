import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MockUpstream, sendJson, writeSse, openaiFixtures, type RecordedRequest } from '../../helpers/mock-upstream';
import { startTestGateway, testConfig, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY } from '../../helpers/accounts';

/** Prices of the cached models: 1 and 3 micro-credits a token (1000 and 3000 nano-credits). */
export const PRICING = { prompt: 0.000001, completion: 0.000003 };

/**
 * An upstream whose every answer is new (`answer <n>`), so a second upstream call would show in the content: plain
 * or streamed as asked, a tool call when the request has tools, embeddings on /embeddings.
 */
export function scriptedUpstream(): MockUpstream {
  const up = new MockUpstream();
  up.handler = (req: RecordedRequest, res, n) => {
    const body = req.json as { stream?: boolean; tools?: unknown[]; input?: unknown };
    if (req.path.endsWith('/embeddings')) {
      return sendJson(res, 200, {
        object: 'list',
        data: [{ object: 'embedding', index: 0, embedding: [n, 0.5, 0.25] }],
        model: 'e',
        usage: { prompt_tokens: 4, total_tokens: 4 },
      });
    }
    const tool = body.tools?.length
      ? { id: `call_${n}`, type: 'function', function: { name: 'get_weather', arguments: `{"city":"Paris ${n}"}` } }
      : undefined;
    if (!body.stream) {
      const c = openaiFixtures.completion(`answer ${n}`) as unknown as {
        choices: Array<{ message: Record<string, unknown>; finish_reason: string }>;
      };
      if (tool) {
        c.choices[0].message = { role: 'assistant', content: null, tool_calls: [tool] };
        c.choices[0].finish_reason = 'tool_calls';
      }
      return sendJson(res, 200, c);
    }
    const events: unknown[] = [openaiFixtures.chunk({ role: 'assistant', content: '' })];
    if (tool) {
      events.push(
        openaiFixtures.chunk({ tool_calls: [{ index: 0, ...tool, function: { name: 'get_weather', arguments: '' } }] }),
      );
      events.push(
        openaiFixtures.chunk({ tool_calls: [{ index: 0, function: { arguments: tool.function.arguments } }] }),
      );
      events.push(openaiFixtures.chunk({}, 'tool_calls'));
    } else {
      events.push(openaiFixtures.chunk({ content: 'answer ' }), openaiFixtures.chunk({ content: String(n) }));
      events.push(openaiFixtures.chunk({}, 'stop'));
    }
    events.push(openaiFixtures.usageChunk(19, 10));
    return writeSse(res, events);
  };
  return up;
}

/** Models on the scripted upstream: `up/m`, `up/other`, `up/tools` (non-deterministic allowed), `up/off`, `up/e`. */
export function cacheModels() {
  const chat = (id: string) => ({ id, pricing: PRICING, deployments: [{ provider: 'up', model: 'gpt-4o-mini' }] });
  return [
    chat('up/m'),
    chat('up/other'),
    chat('up/tools'),
    chat('up/off'),
    { id: 'up/e', endpoints: ['embeddings'], pricing: PRICING, deployments: [{ provider: 'up', model: 'e' }] },
  ];
}

export function providersOf(up: MockUpstream) {
  return [{ name: 'up', type: 'openai', api_base: `${up.url}/v1`, api_key: 'sk-test' }];
}

export const CACHE_DEFAULTS = {
  models: ['up/*'],
  exclude_models: ['up/off'],
  non_deterministic_models: ['up/tools'],
};

/** A gateway with auth, limits, credit, storage, the cache (its config over CACHE_DEFAULTS) and routing. */
export async function cacheGateway(
  up: MockUpstream,
  cache: Record<string, unknown> = {},
  opts: { store?: Record<string, unknown>; limits?: Record<string, unknown> } = {},
): Promise<TestGateway> {
  const store = opts.store ?? { driver: 'sqlite', path: join(mkdtempSync(join(tmpdir(), 'gw-cache-')), 'g.db') };
  return startTestGateway(
    testConfig(
      {
        store,
        providers: providersOf(up),
        models: cacheModels(),
        plugins: [
          'metrics',
          'auth',
          { limits: opts.limits ?? {} },
          'credit',
          'storage',
          { cache: { ...CACHE_DEFAULTS, ...cache } },
          'routing',
        ],
      },
      { GATEWAY_ADMIN_KEY: ADMIN_KEY },
    ),
  );
}

/** POST a chat request with a key; the answer's JSON (or SSE text) and headers. */
export async function chat(
  gw: { url: string },
  key: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
  path = '/v1/chat/completions',
): Promise<{ status: number; cache: string | null; json: Record<string, unknown>; text: string; headers: Headers }> {
  const res = await fetch(gw.url + path, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // a stream
  }
  return { status: res.status, cache: res.headers.get('x-gateway-cache'), json, text, headers: res.headers };
}
