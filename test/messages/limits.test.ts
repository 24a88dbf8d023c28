import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, testConfig, type TestGateway } from '../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../helpers/accounts';
import { MockUpstream, openaiFixtures, sendJson } from '../helpers/mock-upstream';

const model = (id: string, provider: string) => ({
  id,
  context_length: 8000,
  pricing: { prompt: 0.000001, completion: 0.000002 },
  deployments: [{ provider, model: 'gpt-4o-mini' }],
});

/**
 * Money and limits on /v1/messages as on chat (issues 41 and 45): the same attempt rule, through Anthropic's endpoint
 * and its error shape: a model's rpm counts every upstream call whichever way it is reached, a key's concurrency and
 * credit hold, a fallback is guarded like the first attempt.
 */
describe('credit, allowlists and rate limits on /v1/messages', function () {
  this.timeout(30000);
  const failing = new MockUpstream();
  const limited = new MockUpstream();
  let gw: TestGateway;
  const ask = (key: string, body: Record<string, unknown>) =>
    fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ max_tokens: 20, messages: [{ role: 'user', content: 'hi' }], ...body }),
    });

  before(async () => {
    await failing.start();
    await limited.start();
    failing.handler = (_r, res) => sendJson(res, 500, { error: { message: 'overloaded', type: 'server_error' } });
    limited.handler = (_r, res) => sendJson(res, 200, openaiFixtures.completion('ok'));
    gw = await startTestGateway(
      testConfig(
        {
          providers: [
            { name: 'failing', type: 'openai', api_base: `${failing.url}/v1`, api_key: 'sk-upstream-secret-1' },
            { name: 'limited', type: 'openai', api_base: `${limited.url}/v1`, api_key: 'sk-upstream-secret-2' },
          ],
          models: [model('m/failing', 'failing'), model('m/limited', 'limited')],
          plugins: [
            'auth',
            'params',
            { fallback: { num_retries: 0, backoff_base_ms: 1, backoff_max_ms: 2 } },
            { limits: { models: { 'm/limited': { rpm: 2 } } } },
            'credit',
            'routing',
          ],
        },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
  });
  after(async () => {
    await gw.stop();
    await failing.stop();
    await limited.stop();
  });

  it("a model's rpm holds whether it is asked for directly or reached as a fallback; refusals in Anthropic's shape", async () => {
    const { key } = await makeAccountKey(gw);
    const direct = [];
    for (let i = 0; i < 3; i++) direct.push((await ask(key, { model: 'm/limited' })).status);
    expect(direct).to.deep.equal([200, 200, 429]);
    for (let i = 0; i < 3; i++) {
      const r = await ask(key, { model: 'm/failing', fallbacks: ['m/limited'] });
      expect(r.status).to.equal(429);
      const body = (await r.json()) as { type: string; error: { type: string } };
      expect(body).to.deep.include({ type: 'error' });
      expect(body.error.type).to.equal('rate_limit_error');
    }
    expect(limited.requests.length).to.equal(2);
  });

  it("a key's allowlist holds for fallbacks, and its credit limit for the reservation", async () => {
    const { key, hash } = await makeAccountKey(gw);
    await adminCall(gw, 'PUT', `/v1/keys/${hash}/limits`, { allowed_models: ['m/failing'] });
    const before = limited.requests.length;
    const r = await ask(key, { model: 'm/failing', fallbacks: ['m/limited'] });
    expect(r.status).to.equal(502);
    expect(limited.requests.length).to.equal(before);
    const poor = await makeAccountKey(gw, { credits: 0.00001 });
    const client = new Anthropic({ baseURL: gw.url, apiKey: poor.key, maxRetries: 0 });
    const e = await client.messages
      .create({ model: 'm/failing', max_tokens: 1000, messages: [{ role: 'user', content: 'hi' }] })
      .catch((x: unknown) => x);
    expect((e as { status?: number }).status).to.equal(402);
  });

  it("a key's concurrency holds on streams", async () => {
    const { key, hash } = await makeAccountKey(gw);
    await adminCall(gw, 'PUT', `/v1/keys/${hash}/limits`, { rate_limits: { concurrency: 1 } });
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    limited.handler = async (_r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(openaiFixtures.chunk({ role: 'assistant', content: 'a' }))}\n\n`);
      await held;
      res.write(`data: ${JSON.stringify(openaiFixtures.chunk({}, 'stop'))}\n\n`);
      res.end('data: [DONE]\n\n');
    };
    // A fresh model minute: the limited model's rpm was spent by the first test; use the key's own limit alone.
    await adminCall(gw, 'PUT', `/v1/keys/${hash}/limits`, { rate_limits: { concurrency: 1 }, allowed_models: null });
    const first = await ask(key, { model: 'm/failing', stream: true, fallbacks: [] });
    expect(first.status).to.equal(502); // the failing model: refused upstream, slot released at once
    failing.handler = limited.handler;
    const open = await ask(key, { model: 'm/failing', stream: true });
    expect(open.status).to.equal(200);
    const second = await ask(key, { model: 'm/failing', stream: true });
    expect(second.status).to.equal(429);
    expect(((await second.json()) as { error: { type: string } }).error.type).to.equal('rate_limit_error');
    release();
    expect(await open.text()).to.contain('message_stop');
  });
});
