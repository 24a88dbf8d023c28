import { expect } from 'chai';
import type { ServerResponse } from 'node:http';
import { postJson, startTestGateway, type TestGateway } from '../../helpers/gateway';
import { makeAccountKey } from '../../helpers/accounts';
import { creditConfig } from '../../helpers/credit';
import { MockUpstream, sendJson, writeSse, type RecordedRequest } from '../../helpers/mock-upstream';
import { anthropicMessage, messageEnd, messageStart, textBlock } from '../../helpers/anthropic-sse';
import { parseConfig } from '../../../src/config/load';
import { configWarnings } from '../../../src/config/warnings';
import { noOverruns, settled } from './books';

/**
 * Issue 41: Anthropic bills a one-hour cache write (`cache_control: {type: "ephemeral", ttl: "1h"}`) at 2x input and a
 * five-minute one at 1.25x. The usage keeps the one-hour writes apart and they are billed at `cache_write_1h`
 * (default 1.6 x cache_write, else 2 x prompt); `gateway check` warns about models whose provider bills cache tokens
 * apart but that have no cache prices.
 */
const PRICING = { prompt: 0.000003, completion: 0.000015, cache_read: 0.0000003, cache_write: 0.00000375 };
const USAGE = {
  input_tokens: 10,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 1000,
  cache_creation: { ephemeral_5m_input_tokens: 400, ephemeral_1h_input_tokens: 600 },
} as unknown as Record<string, number>; // the helpers type usage flat; Anthropic nests cache_creation

/** A Claude that reports its whole cached prompt as written: 400 tokens for five minutes, 600 for an hour. */
function answer(req: RecordedRequest, res: ServerResponse): Promise<void> | void {
  const body = req.json as { stream?: boolean; model: string };
  if (body.stream)
    return writeSse(res, [messageStart(USAGE, body.model), ...textBlock(0, 'ok'), ...messageEnd('end_turn', 5)], {
      named: true,
    });
  sendJson(res, 200, anthropicMessage([{ type: 'text', text: 'ok' }], { ...USAGE, output_tokens: 5 }));
}

describe('credit: one-hour cache writes at their own price (issue 41)', function () {
  this.timeout(20000);
  let up: MockUpstream;
  let gw: TestGateway;
  before(async () => {
    up = await new MockUpstream().start();
    up.handler = answer;
    const model = (id: string, pricing: Record<string, number>) => ({
      id,
      context_length: 200000,
      pricing,
      deployments: [{ provider: 'anthropic', model: 'claude-sonnet' }],
    });
    gw = await startTestGateway(
      creditConfig({
        providers: [{ name: 'anthropic', type: 'anthropic', api_base: up.url, api_key: 'k' }],
        models: [
          model('a/default', PRICING),
          model('a/priced', { ...PRICING, cache_write_1h: 0.000007 }),
          model('a/prompt-only', { prompt: 0.000003, completion: 0.000015 }),
        ],
        plugins: ['auth', 'params', 'credit', 'routing'],
      }),
    );
  });
  after(async () => {
    await gw.stop();
    await up.stop();
  });

  const hourCached = [
    {
      role: 'system',
      content: [
        { type: 'text', text: 'a long shared context '.repeat(60), cache_control: { type: 'ephemeral', ttl: '1h' } },
      ],
    },
    { role: 'user', content: 'hi' },
  ];

  async function charge(model: string, stream: boolean) {
    const { key, accountId } = await makeAccountKey(gw, { credits: 1 });
    const res = await postJson(
      `${gw.url}/v1/chat/completions`,
      { model, stream, max_tokens: 20, messages: hourCached },
      { authorization: `Bearer ${key}` },
    );
    expect(res.status).to.equal(200);
    await res.text();
    await settled(gw, accountId);
    const [g] = await gw.services.store.generations.list({ accountId, limit: 1 });
    expect(await noOverruns(gw, accountId)).to.equal(1);
    return g;
  }

  for (const stream of [false, true]) {
    const how = stream ? 'streamed' : 'plain';
    it(`${how}: 1h writes default to 1.6 x cache_write (2x input), 5m writes at cache_write`, async () => {
      const g = await charge('a/default', stream);
      expect(g).to.include({ promptTokens: 1010, cacheWriteTokens: 1000, completionTokens: 5 });
      expect(g.cost).to.equal(10 * 3000 + 400 * 3750 + 600 * 6000 + 5 * 15000);
    });
    it(`${how}: an explicit cache_write_1h is used as given`, async () => {
      const g = await charge('a/priced', stream);
      expect(g.cost).to.equal(10 * 3000 + 400 * 3750 + 600 * 7000 + 5 * 15000);
    });
  }

  it('without cache_write, 1h writes cost 2 x prompt (Anthropic) and 5m writes the prompt price', async () => {
    const g = await charge('a/prompt-only', false);
    expect(g.cost).to.equal(10 * 3000 + 400 * 3000 + 600 * 6000 + 5 * 15000);
  });
});

describe('gateway check: cache prices for providers that bill cache tokens apart (issue 41)', () => {
  const check = (models: string) =>
    configWarnings(
      parseConfig(
        `
providers:
  - { name: anthropic, type: anthropic, api_key: k }
  - { name: bedrock, type: bedrock, options: { region: us-east-1 } }
  - { name: openai, type: openai, api_key: k }
  - { name: gemini, type: gemini, api_key: k }
  - { name: mock, type: mock }
models:
${models}
plugins: [routing]
`,
        { env: {} },
      ),
    );
  const price = '{ prompt: 0.000001, completion: 0.000002 }';

  it('warns per model whose provider bills cache reads or writes and that has no such price', () => {
    const w =
      check(`  - { id: a/claude, pricing: ${price}, deployments: [{ provider: anthropic, model: claude-sonnet-4-5 }] }
  - { id: b/claude, pricing: ${price}, deployments: [{ provider: bedrock, model: anthropic.claude-sonnet-4-5 }] }
  - { id: o/4o, pricing: ${price}, deployments: [{ provider: openai, model: gpt-4o }] }
  - { id: g/flash, pricing: ${price}, deployments: [{ provider: gemini, model: gemini-2.5-flash }] }`);
    expect(w).to.have.length(4);
    expect(w[0]).to.include('a/claude').and.include('cache_read or cache_write').and.include('cache_write_1h');
    expect(w[1]).to.include('b/claude').and.include('cache_write');
    expect(w[2]).to.include('o/4o').and.include('cache_read').and.not.include('cache_write ');
    expect(w[3]).to.include('g/flash');
  });

  it('no warning with the cache prices, for providers without cache billing, or for free models', () => {
    const w =
      check(`  - { id: a/claude, pricing: { prompt: 0.000003, completion: 0.000015, cache_read: 0.0000003, cache_write: 0.00000375 }, deployments: [{ provider: anthropic, model: claude }] }
  - { id: o/4o, pricing: { prompt: 0.0000025, completion: 0.00001, cache_read: 0.00000125 }, deployments: [{ provider: openai, model: gpt-4o }] }
  - { id: b/nova, pricing: ${price}, deployments: [{ provider: bedrock, model: amazon.nova-pro }] }
  - { id: m/m, pricing: ${price}, deployments: [{ provider: mock, model: m }] }
  - { id: a/free, pricing: { free: true }, deployments: [{ provider: anthropic, model: claude }] }`);
    expect(w).to.deep.equal([]);
  });
});
