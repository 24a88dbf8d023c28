import { expect } from 'chai';
import { startTestGateway, type TestGateway } from '../../helpers/gateway';
import { makeAccountKey } from '../../helpers/accounts';
import { creditConfig } from '../../helpers/credit';
import type { MockUpstream } from '../../helpers/mock-upstream';
import { books, burst, noOverruns, served } from './books';
import { honestClaude } from './honest-claude';
import { honestGemini } from './honest-gemini';

/**
 * Issues 13 + 17: a thinking budget raises what Claude may produce (the adapter raises
 * max_tokens above the budget, or sends its default when the request gives none), and a
 * cache write costs more than a prompt token. An honest upstream that uses its whole output
 * allowance and reports its whole prompt as cache writes must never overrun the reservation,
 * and the key's limit holds.
 */
const PRICING = { prompt: 0.000003, completion: 0.000015, cache_write: 0.00000375, cache_read: 0.0000003 };
const bedrockOptions = { region: 'us-east-1', access_key_id: 'AKIDEXAMPLE', secret_access_key: 'secretEXAMPLE' };

function models() {
  // max_output_tokens below the adapter's default max_tokens (4096): the default is what bounds the output.
  const m = (id: string, provider: string, upstream: string) => ({
    id,
    owned_by: 'up',
    context_length: 200000,
    max_output_tokens: 2000,
    pricing: PRICING,
    deployments: [{ provider, model: upstream }],
  });
  return [
    m('a/claude', 'anthropic', 'claude-sonnet'),
    m('a/claude-cw', 'anthropic', 'claude-sonnet-cache-write'),
    m('a/claude-cr', 'anthropic', 'claude-sonnet-cache-read'),
    m('b/claude', 'bedrock', 'anthropic.claude-sonnet'),
    m('b/claude-cw', 'bedrock', 'anthropic.claude-sonnet-cache-write'),
    // A reasoning token dearer than a completion token; Gemini's default output allowance is the model's maximum.
    {
      ...m('g/gemini', 'gemini', 'gemini-2.5-flash'),
      max_output_tokens: 8192,
      pricing: { ...PRICING, reasoning: 0.00006 },
    },
  ];
}

/** Requests whose thinking budget raises the output allowance past what the client asked for. */
const thinking = [
  { max_tokens: 50, reasoning_effort: 'low' }, // budget 1,024 >= 50: max_tokens 1,074
  { max_tokens: 100, reasoning: { max_tokens: 3000 } }, // max_tokens 3,100
  { reasoning: { effort: 'high' } }, // no max_tokens: the adapter's 4,096 (the model says 2,000)
  { max_completion_tokens: 64, reasoning: { enabled: true } }, // medium: 1,024 + 64
];

describe('credit bound across reasoning budgets and cache pricing (issues 13, 17)', function () {
  this.timeout(60000);
  let up: MockUpstream;
  let gemini: MockUpstream;
  let gw: TestGateway;
  before(async () => {
    up = await honestClaude().start();
    gemini = await honestGemini().start();
    gw = await startTestGateway(
      creditConfig({
        providers: [
          { name: 'anthropic', type: 'anthropic', api_base: up.url, api_key: 'k' },
          { name: 'bedrock', type: 'bedrock', api_base: up.url, options: bedrockOptions },
          { name: 'gemini', type: 'gemini', api_base: gemini.url, api_key: 'k' },
        ],
        models: models(),
        plugins: ['metrics', 'auth', 'params', 'fallback', 'credit', 'routing'],
      }),
    );
  });
  after(async () => {
    await gw.stop();
    await up.stop();
    await gemini.stop();
  });

  const user = (text: string) => [{ role: 'user', content: text }];
  const limited = (limit: number) => makeAccountKey(gw, { credits: 100, limit });
  const sentMaxTokens = () =>
    up.requests.map(
      (r) =>
        (r.json as { max_tokens?: number; inferenceConfig?: { maxTokens?: number } }).max_tokens ??
        (r.json as { inferenceConfig?: { maxTokens?: number } }).inferenceConfig?.maxTokens,
    );

  for (const model of ['a/claude', 'b/claude']) {
    it(`${model}: a thinking budget, an upstream using the whole allowance, 40 concurrent: limit holds, no overrun`, async () => {
      const k = await limited(0.5);
      const before = up.requests.length;
      const stream = model.startsWith('a/');
      const { costs, statuses } = await burst(
        gw,
        '/v1/chat/completions',
        k,
        (i) => ({
          model,
          messages: user(`think about ${i}`),
          ...thinking[i % thinking.length],
          ...(stream && i % 2 === 1 ? { stream: true, stream_options: { include_usage: true } } : {}),
        }),
        40,
      );
      const sent = sentMaxTokens().slice(before);
      // The adapter did raise the allowance: the upstream was allowed (and used) more than the client asked.
      expect(sent).to.include.members([1074, 3100, 4096, 1088]);
      expect(served(statuses)).to.be.within(1, 39);
      await books(gw, k, costs);
      expect(await noOverruns(gw, k.accountId)).to.equal(served(statuses));
    });
  }

  it('g/gemini: thoughts billed within maxOutputTokens at a dearer reasoning price, 40 concurrent: limit holds, no overrun', async () => {
    const k = await limited(0.5);
    const before = gemini.requests.length;
    const { costs, statuses } = await burst(
      gw,
      '/v1/chat/completions',
      k,
      (i) => ({
        model: 'g/gemini',
        messages: user(`think about ${i}`),
        ...thinking[i % thinking.length],
        ...(i % 2 === 1 ? { stream: true, stream_options: { include_usage: true } } : {}),
      }),
      40,
    );
    expect(served(statuses)).to.be.within(1, 39);
    expect(gemini.requests.length - before).to.equal(served(statuses));
    await books(gw, k, costs);
    expect(await noOverruns(gw, k.accountId)).to.equal(served(statuses));
    const records = await gw.services.store.generations.list({ accountId: k.accountId, limit: 100 });
    // A refused request's light record (402, httpStatus set; written in a batch, so present or not yet) bills nothing.
    const settledRecords = records.filter((g) => g.httpStatus == null);
    expect(settledRecords).to.have.length(served(statuses));
    for (const g of settledRecords)
      expect(g.cost).to.equal(3000 * g.promptTokens + 15000 + 60000 * (g.completionTokens - 1));
  });

  it('a key whose limit is below the raised allowance is refused before anything is sent', async () => {
    // 1,074 output tokens at 0.000015 are 0.0161 credits: a 0.015 limit cannot cover it, 50 tokens alone could.
    const k = await limited(0.015);
    const before = up.requests.length;
    const { statuses } = await burst(
      gw,
      '/v1/chat/completions',
      k,
      () => ({ model: 'a/claude', messages: user('hi'), ...thinking[0] }),
      1,
    );
    expect(statuses).to.deep.equal([402]);
    expect(up.requests.length).to.equal(before);
    await books(gw, k, []);
  });

  for (const model of ['a/claude-cw', 'a/claude-cr', 'b/claude-cw']) {
    it(`${model}: the whole prompt reported as cache ${model.includes('cw') ? 'writes' : 'reads'}: bound and charge agree`, async () => {
      const k = await limited(0.5);
      const system = 'You are a careful assistant. '.repeat(400); // about 12 KB, cached
      const { costs, statuses, bodies } = await burst(
        gw,
        '/v1/chat/completions',
        k,
        (i) => ({
          model,
          max_tokens: 200,
          ...(i % 3 === 0 ? thinking[1] : {}),
          messages: [
            { role: 'system', content: [{ type: 'text', text: system, cache_control: { type: 'ephemeral' } }] },
            ...user(`question ${i}`),
          ],
        }),
        40,
      );
      expect(served(statuses)).to.be.within(1, 39);
      await books(gw, k, costs);
      expect(await noOverruns(gw, k.accountId)).to.equal(served(statuses));
      // The generation records say what was cached, and the answers priced it at the cache price.
      const records = await gw.services.store.generations.list({ accountId: k.accountId, limit: 1000 });
      const ok = records.filter((g) => g.status === 'completed');
      expect(ok).to.have.length(served(statuses));
      for (const g of ok) {
        if (model.includes('cw')) expect(g.cacheWriteTokens).to.equal(g.promptTokens);
        else expect(g.cachedTokens).to.equal(g.promptTokens);
        expect(g.cost).to.equal((model.includes('cw') ? 3750 : 300) * g.promptTokens + 15000 * g.completionTokens);
      }
      expect(bodies.length).to.equal(40);
    });
  }
});
