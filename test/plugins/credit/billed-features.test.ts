import { expect } from 'chai';
import { postJson, startTestGateway, type TestGateway } from '../../helpers/gateway';
import { makeAccountKey } from '../../helpers/accounts';
import { creditConfig } from '../../helpers/credit';
import { MockUpstream, openaiFixtures, sendJson } from '../../helpers/mock-upstream';
import { billedFeatureProblem } from '../../../src/models/billed-features';
import type { ModelConfig } from '../../../src/config/types';
import type { ChatRequest } from '../../../src/types/openai';
import { noOverruns, settled } from './books';

/**
 * Issue 41: nothing reaches an upstream that the gateway cannot charge for. Web search, priority processing, audio
 * output and predicted outputs are billed by OpenAI beyond the per-token prices: a request that asks for one is
 * refused (400 parameter_not_priced, nothing sent) unless the model's `billed_features` prices it, and then the price
 * is reserved and charged.
 */
const PRICING = { prompt: 0.000001, completion: 0.000002 }; // 1,000 and 2,000 nano-credits a token
const FEATURES = {
  web_search: { per_request: 0.01 },
  priority_tier: { multiplier: 2 },
  audio: { completion: 0.00008, prompt: 0.00004 },
  predicted_outputs: {},
};
const ASKS: Array<[string, Record<string, unknown>]> = [
  ['web_search_options', { web_search_options: { search_context_size: 'low' } }],
  ['service_tier', { service_tier: 'priority' }],
  ['modalities', { modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } }],
  ['audio', { audio: { voice: 'alloy', format: 'wav' } }],
  ['prediction', { prediction: { type: 'content', content: 'the old text of the file' } }],
];

describe('credit: parameters the provider bills apart need a price (issue 41)', function () {
  this.timeout(20000);
  let up: MockUpstream;
  let gw: TestGateway;
  let usage: Record<string, unknown>;
  before(async () => {
    up = await new MockUpstream().start();
    up.handler = (_req, res) => sendJson(res, 200, { ...openaiFixtures.completion('ok'), usage });
    const model = (id: string, extra: Record<string, unknown> = {}) => ({
      id,
      pricing: PRICING,
      deployments: [{ provider: 'openai', model: 'gpt-4o' }],
      ...extra,
    });
    gw = await startTestGateway(
      creditConfig({
        providers: [{ name: 'openai', type: 'openai', api_base: `${up.url}/v1`, api_key: 'k' }],
        models: [model('o/plain'), model('o/featured', { billed_features: FEATURES })],
        plugins: ['auth', 'params', 'credit', 'routing'],
      }),
    );
  });
  after(async () => {
    await gw.stop();
    await up.stop();
  });
  beforeEach(() => {
    usage = { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 };
  });

  async function ask(key: string, body: Record<string, unknown>) {
    const res = await postJson(
      `${gw.url}/v1/chat/completions`,
      { max_tokens: 50, messages: [{ role: 'user', content: 'hi' }], ...body },
      { authorization: `Bearer ${key}` },
    );
    return {
      status: res.status,
      body: (await res.json()) as {
        error: { code: string; param: string; message: string };
        usage: { cost: number };
      },
    };
  }

  for (const [param, fields] of ASKS) {
    it(`${param} on a model without its price: 400 naming it, nothing sent upstream, nothing charged`, async () => {
      const { key, accountId } = await makeAccountKey(gw, { credits: 1 });
      const before = up.requests.length;
      const r = await ask(key, { model: 'o/plain', ...fields });
      expect(r.status, JSON.stringify(r.body)).to.equal(400);
      expect(r.body.error).to.include({ code: 'parameter_not_priced', param });
      expect(r.body.error.message).to.include('billed_features');
      expect(up.requests.length).to.equal(before);
      expect((await gw.services.store.accounts.get(accountId))!.usage).to.equal(0);
    });
  }

  it('service_tier flex (cheaper) and default are sent as asked', async () => {
    const { key } = await makeAccountKey(gw, { credits: 1 });
    for (const tier of ['flex', 'default', 'auto']) {
      const r = await ask(key, { model: 'o/plain', service_tier: tier });
      expect(r.status).to.equal(200);
      expect(up.requests[up.requests.length - 1].json).to.include({ service_tier: tier });
    }
  });

  async function charged(body: Record<string, unknown>): Promise<number> {
    const { key, accountId } = await makeAccountKey(gw, { credits: 1 });
    const r = await ask(key, { model: 'o/featured', ...body });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    await settled(gw, accountId);
    expect(await noOverruns(gw, accountId)).to.equal(1);
    const [g] = await gw.services.store.generations.list({ accountId, limit: 1 });
    expect(Math.round(r.body.usage.cost * 1e9)).to.equal(g.cost);
    return g.cost;
  }

  it('web search on a model that prices it: sent, and charged its per-request fee', async () => {
    expect(await charged(ASKS[0][1])).to.equal(20 * 1000 + 10 * 2000 + 10_000_000);
    expect(up.requests[up.requests.length - 1].json).to.have.property('web_search_options');
  });

  it('priority processing: every token at the multiplied price', async () => {
    expect(await charged(ASKS[1][1])).to.equal(2 * (20 * 1000 + 10 * 2000));
  });

  it('audio output: audio tokens at their own prices', async () => {
    usage = {
      prompt_tokens: 20,
      completion_tokens: 40,
      total_tokens: 60,
      prompt_tokens_details: { audio_tokens: 5 },
      completion_tokens_details: { audio_tokens: 30 },
    };
    expect(await charged(ASKS[2][1])).to.equal(15 * 1000 + 5 * 40_000 + 10 * 2000 + 30 * 80_000);
  });

  it('predicted outputs: rejected prediction tokens at the completion price, and within the reservation', async () => {
    // More output than max_tokens: the rejected prediction tokens come on top, bounded by the prediction's size.
    usage = {
      prompt_tokens: 20,
      completion_tokens: 56,
      total_tokens: 76,
      completion_tokens_details: { rejected_prediction_tokens: 6 },
    };
    expect(await charged(ASKS[4][1])).to.equal(20 * 1000 + 56 * 2000);
  });

  it('billedFeatureProblem holds per model, for every model of a plan (a fallback without the price is refused)', () => {
    const m = (id: string, billed_features?: unknown) => ({ id, pricing: PRICING, billed_features }) as ModelConfig;
    const req = { model: 'o/featured', messages: [], service_tier: 'priority' } as unknown as ChatRequest;
    expect(billedFeatureProblem(req, m('o/featured', FEATURES))).to.equal(undefined);
    const e = billedFeatureProblem(req, m('o/fallback'));
    expect(e?.status).to.equal(400);
    expect(e?.code).to.equal('parameter_not_priced');
    expect(e?.message).to.include("'o/fallback'");
    expect(billedFeatureProblem({ ...req, service_tier: 'flex' } as ChatRequest, m('o/fallback'))).to.equal(undefined);
  });
});
