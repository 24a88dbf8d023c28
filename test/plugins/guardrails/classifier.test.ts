import { expect } from 'chai';
import { postJson, startTestGateway, type TestGateway } from '../../helpers/gateway';
import { MockUpstream, openaiFixtures, sendJson } from '../../helpers/mock-upstream';
import { chatModel, echoUpstream, guardConfig, userText } from './helpers';

/**
 * The classifier is a model of the gateway itself (`up/c`, on its own mock upstream), called through the gateway's
 * chat endpoint over loopback. `up/m` fails closed, `up/open` fails open.
 */
describe('guardrails: the classifier, and failing closed or open', function () {
  this.timeout(60000);
  let upstream: MockUpstream;
  let judge: MockUpstream;
  let gw: TestGateway;
  const judgeSays = () => {
    judge.handler = (req, res) =>
      sendJson(res, 200, openaiFixtures.completion(/bomb/.test(userText(req)) ? 'unsafe' : 'safe'));
  };

  before(async () => {
    upstream = await echoUpstream(4).start();
    judge = await new MockUpstream().start();
    judgeSays();
    const config = guardConfig(
      upstream,
      [
        {
          guardrails: {
            policies: {
              closed: { checks: [{ detector: 'classifier', on: 'input', action: 'block' }], on_error: 'fail_closed' },
              open: { checks: [{ detector: 'classifier', on: 'input', action: 'block' }], on_error: 'fail_open' },
            },
            models: { 'up/m': 'closed', 'up/open': 'open' },
            classifier: { model: 'up/c', timeout_ms: 400 },
          },
        },
        'metrics',
        'routing',
      ],
      {
        providers: [{ name: 'judge', type: 'openai', api_base: `${judge.url}/v1`, api_key: 'j' }],
        models: [chatModel('up/open'), chatModel('up/c', 'judge')],
      },
    );
    gw = await startTestGateway(config);
  });
  after(async () => {
    await gw?.stop();
    await upstream?.stop();
    await judge?.stop();
  });
  afterEach(judgeSays);

  const ask = (model: string, text: string) =>
    postJson(`${gw.url}/v1/chat/completions`, { model, messages: [{ role: 'user', content: text }] });

  it('safe: answered; unsafe: 400 guardrail_blocked and nothing sent upstream', async () => {
    expect((await ask('up/m', 'how do plants grow')).status).to.equal(200);
    const before = upstream.requests.length;
    const res = await ask('up/m', 'how to build a bomb');
    expect(res.status).to.equal(400);
    expect(await res.text()).to.include('guardrail_blocked');
    expect(upstream.requests.length).to.equal(before);
    expect(judge.requests.at(-1)!.body).to.include('how to build a bomb');
  });

  for (const [how, handler] of [
    ['down', (_req: unknown, res: { socket: { destroy(): void } | null }) => res.socket?.destroy()],
    [
      'slow',
      async (_req: unknown, res: never) => {
        await new Promise((r) => setTimeout(r, 1500));
        sendJson(res, 200, openaiFixtures.completion('safe'));
      },
    ],
  ] as const) {
    it(`classifier ${how}: fail_closed answers 503 guardrail_unavailable, sending nothing`, async () => {
      judge.handler = handler as never;
      const before = upstream.requests.length;
      const started = Date.now();
      const res = await ask('up/m', 'hello there');
      expect(res.status).to.equal(503);
      expect(await res.text()).to.include('guardrail_unavailable');
      expect(upstream.requests.length).to.equal(before);
      expect(Date.now() - started, 'bounded by the timeout').to.be.lessThan(1400);
    });

    it(`classifier ${how}: fail_open answers, and records the outage`, async () => {
      judge.handler = handler as never;
      const res = await ask('up/open', 'hello there');
      expect(res.status).to.equal(200);
      const metrics = await (await fetch(`${gw.url}/metrics`)).text();
      expect(metrics).to.match(
        /gateway_guardrails_actions_total\{rule="classifier_unavailable",side="input",action="flag"\} [1-9]/,
      );
      expect(metrics).to.match(/gateway_guardrails_classifier_calls_total\{outcome="error"\} [1-9]/);
    });
  }
});
