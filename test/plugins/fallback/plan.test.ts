import { expect } from 'chai';
import { startTestGateway, testConfig, postJson, type TestGateway } from '../../helpers/gateway';
import { MockUpstream, openaiFixtures, sendJson } from '../../helpers/mock-upstream';

interface ErrorBody {
  error: { message: string; param: string | null; code: string };
}

/** The attempt plan the fallback plugin writes, seen from the upstreams routing calls with it. */
describe('fallback: the attempt plan', () => {
  let a: MockUpstream;
  let b: MockUpstream;
  let gw: TestGateway;
  /** Which upstream model each call reached, in order, across both upstreams. */
  let calls: string[];
  const fail = (model: string) => (_r: unknown, res: Parameters<MockUpstream['handler']>[1]) => {
    calls.push(model);
    sendJson(res, 503, { error: { message: 'busy' } });
  };
  const answer = (model: string) => (_r: unknown, res: Parameters<MockUpstream['handler']>[1]) => {
    calls.push(model);
    sendJson(res, 200, openaiFixtures.completion(`from ${model}`));
  };
  const send = (model: string, extra: Record<string, unknown> = {}) =>
    postJson(`${gw.url}/v1/chat/completions`, { model, messages: [{ role: 'user', content: 'hi' }], ...extra });
  const refusal = async (res: Response) => {
    expect(res.status).to.equal(400);
    return ((await res.json()) as ErrorBody).error;
  };

  before(async () => {
    a = await new MockUpstream().start();
    b = await new MockUpstream().start();
    gw = await startTestGateway(
      testConfig({
        providers: [
          { name: 'a', type: 'openai', api_base: `${a.url}/v1` },
          { name: 'b', type: 'openai', api_base: `${b.url}/v1` },
        ],
        models: [
          {
            id: 'm/two',
            routing: { strategy: 'priority', num_retries: 2 },
            deployments: [
              { provider: 'a', model: 'a-model', priority: 0 },
              { provider: 'b', model: 'b-model', priority: 1 },
            ],
          },
          {
            id: 'm/own',
            routing: { fallbacks: ['m/backup'] },
            deployments: [{ provider: 'a', model: 'a-own' }],
          },
          { id: 'm/backup', deployments: [{ provider: 'b', model: 'b-backup' }] },
          { id: 'm/short', context_length: 50, deployments: [{ provider: 'a', model: 'a-short' }] },
        ],
        plugins: [
          'params',
          {
            fallback: {
              num_retries: 1,
              max_retries: 3,
              max_fallbacks: 2,
              max_attempts: 4,
              backoff_base_ms: 1,
              backoff_max_ms: 2,
              cooldown: { failures: 100, window_ms: 1000, cooldown_ms: 1000 },
            },
          },
          'routing',
        ],
      }),
    );
  });
  beforeEach(() => {
    calls = [];
    a.handler = (r, res) => fail((r.json as { model: string }).model)(r, res);
    b.handler = (r, res) => answer((r.json as { model: string }).model)(r, res);
  });
  after(async () => {
    await gw.stop();
    await a.stop();
    await b.stop();
  });

  it("cycles through the model's deployments in strategy order for 1 + num_retries tries (the model's over the plugin's)", async () => {
    b.handler = (r, res) => fail((r.json as { model: string }).model)(r, res);
    const res = await send('m/two');
    expect(res.status).to.be.greaterThanOrEqual(500);
    expect(calls).to.deep.equal(['a-model', 'b-model', 'a-model']);
  });

  it("a request's num_retries wins; above max_retries it is a 400 naming num_retries and nothing is sent", async () => {
    b.handler = (r, res) => fail((r.json as { model: string }).model)(r, res);
    await send('m/two', { num_retries: 0 });
    expect(calls).to.deep.equal(['a-model']);
    calls = [];
    const e = await refusal(await send('m/two', { num_retries: 4 }));
    expect([e.param, e.code]).to.deep.equal(['num_retries', 'invalid_value']);
    expect(calls).to.deep.equal([]);
  });

  it('fallbacks may name max_fallbacks models, models one more (itself); beyond, a 400 naming the field', async () => {
    const fallbacks = await refusal(await send('m/own', { fallbacks: ['m/backup', 'm/backup', 'm/backup'] }));
    expect([fallbacks.param, fallbacks.code]).to.deep.equal(['fallbacks', 'too_many_items']);
    const models = await refusal(await send('m/own', { models: ['m/own', 'm/backup', 'm/backup', 'm/backup'] }));
    expect([models.param, models.code]).to.deep.equal(['models', 'too_many_items']);
    expect(calls).to.deep.equal([]);
    const ok = await send('m/own', { num_retries: 0, models: ['m/own', 'm/backup', 'm/backup'] });
    expect(ok.status).to.equal(200);
    expect(calls).to.deep.equal(['a-own', 'b-backup']);
  });

  it('the plan stops at max_attempts, retries and fallbacks included', async () => {
    b.handler = (r, res) => fail((r.json as { model: string }).model)(r, res);
    await send('m/two', { num_retries: 3, fallbacks: ['m/backup', 'm/own'] });
    expect(calls).to.have.length(4);
  });

  it("uses the model's own fallbacks when the request names none, and a request's list instead of them", async () => {
    const own = await send('m/own', { num_retries: 0 });
    expect(((await own.json()) as { model: string }).model).to.equal('m/backup');
    expect(calls).to.deep.equal(['a-own', 'b-backup']);
    calls = [];
    const listed = await send('m/own', { num_retries: 0, fallbacks: ['m/two'] });
    expect(listed.status).to.be.greaterThanOrEqual(500);
    expect(calls).to.deep.equal(['a-own', 'a-model']); // m/two's first deployment fails too; m/backup is not tried
  });

  it('an unknown fallback model is a 400 model_not_found naming where the request named it', async () => {
    for (const [extra, param] of [
      [{ fallbacks: ['nope/x'] }, 'fallbacks[0]'],
      [{ fallbacks: ['m/backup', { model: 'nope/x' }] }, 'fallbacks[1].model'],
      [{ models: ['m/own', 'nope/x'] }, 'models[1]'],
      [{ context_window_fallback_dict: { 'm/own': 'nope/x' } }, 'context_window_fallback_dict'],
    ] as const) {
      const e = await refusal(await send('m/own', extra));
      expect([e.param, e.code], JSON.stringify(extra)).to.deep.equal([param, 'model_not_found']);
    }
    expect(calls).to.deep.equal([]);
  });

  it("a fallback entry may not set the gateway's fields or stream, and its parameters are checked as the request's", async () => {
    const gatewayField = await refusal(
      await send('m/own', { fallbacks: [{ model: 'm/backup', stream: true, api_key: 'sk-x' }] }),
    );
    expect([gatewayField.param, gatewayField.code]).to.deep.equal(['fallbacks[0].stream', 'invalid_fallback']);
    expect(gatewayField.message).to.include("'api_key' cannot be set in a fallback entry");
    const badValue = await refusal(await send('m/own', { fallbacks: [{ model: 'm/backup', temperature: 5 }] }));
    expect(badValue.param).to.equal('fallbacks[0].temperature');
    expect(calls).to.deep.equal([]);
    await send('m/own', { num_retries: 0, fallbacks: [{ model: 'm/backup', temperature: 0.3 }] });
    expect(b.requests[b.requests.length - 1].json).to.deep.include({ model: 'b-backup', temperature: 0.3 });
  });

  it("a request's context_window_fallback_dict sends a prompt too long for the model to the larger one at once", async () => {
    const res = await send('m/short', {
      messages: [{ role: 'user', content: 'word '.repeat(100) }],
      context_window_fallback_dict: { 'm/short': 'm/backup' },
    });
    expect(((await res.json()) as { model: string }).model).to.equal('m/backup');
    expect(calls).to.deep.equal(['b-backup']);
  });
});
