import { expect } from 'chai';
import { chainProblems } from '../helpers/plugin-chain';
import { GatewayError, errors as ourErrors, isGatewayError } from '../../src/errors';
import { postJson, sseData, startTestGateway, testConfig, type TestGateway } from '../helpers/gateway';

const chat = (content: string, extra: Record<string, unknown> = {}) => ({
  model: 'mock/gpt-4o-mini',
  messages: [{ role: 'user', content }],
  ...extra,
});
const fixture = (name: string, config: Record<string, unknown> = {}) => ({
  use: `./test/fixtures/plugins/${name}`,
  config,
});

describe('plugin contract checks', () => {
  for (const [mode, detail] of [
    ['twice', 'called next() more than once'],
    ['twice-swallowed', 'called next() more than once'],
    ['no-await', 'finished before the plugins after it did: await (or return) next()'],
  ] as const) {
    it(`a plugin that ${mode === 'no-await' ? 'does not await next()' : 'calls next() twice'} (${mode}): a 500 for the client, a log line naming it`, async () => {
      const gw = await startTestGateway(testConfig({ plugins: [fixture('contract-breaker', { mode }), 'routing'] }));
      try {
        const res = await postJson(`${gw.url}/v1/chat/completions`, chat('hi'));
        expect(res.status).to.equal(500);
        expect(await res.json()).to.deep.equal({
          error: {
            message: 'Internal gateway error',
            type: 'server_error',
            param: '',
            code: 'plugin_contract_violation',
          },
        });
        const line = gw.logs
          .map((l) => JSON.parse(l) as Record<string, unknown>)
          .find((l) => l.msg === 'a plugin broke the middleware contract');
        expect(line, gw.logs.join('\n')).to.include({ plugin: 'contract-breaker', detail });
        // The gateway goes on serving.
        const again = await postJson(`${gw.url}/v1/chat/completions`, chat('hi'));
        expect(again.status).to.equal(500);
      } finally {
        await gw.stop();
      }
    });
  }

  it('a misspelt keyword in a plugin schema is refused at load, naming the plugin', async () => {
    const p = await chainProblems([fixture('typo-schema'), 'routing']);
    expect(p).to.have.length(1);
    expect(p[0].pointer).to.equal('/plugins/0');
    expect(p[0].message).to.equal(
      `plugin 'typo-schema': its configSchema is not valid JSON Schema: strict mode: unknown keyword: "minimun"`,
    );
  });

  it('dependency order: a plugin that requires what comes later is refused, naming both', async () => {
    const p = await chainProblems([fixture('needs-principal'), fixture('gives-principal'), 'routing']);
    expect(p.map((x) => x.message)).to.deep.equal([
      "plugin 'needs-principal' requires 'principal', which plugin 'gives-principal' provides, but 'gives-principal' comes after 'needs-principal'; move 'gives-principal' before it",
    ]);
  });

  it('an error from another copy of the errors module is still a GatewayError (brand), with its status and Retry-After', async () => {
    const gw = await startTestGateway(testConfig({ plugins: [fixture('foreign-error'), 'routing'] }));
    try {
      const res = await postJson(`${gw.url}/v1/chat/completions`, chat('hi'));
      expect(res.status).to.equal(429);
      expect(res.headers.get('retry-after')).to.equal('7');
      expect(await res.json()).to.deep.equal({
        error: { message: 'Slow down', type: 'rate_limit_error', param: '', code: 'too_fast' },
      });
    } finally {
      await gw.stop();
    }
  });

  it('brand and cause: instanceof and isGatewayError agree; the cause is kept but never serialized', () => {
    const cause = new Error('socket hang up');
    const e = new GatewayError({ status: 502, type: 'upstream_error', code: 'upstream_error', message: 'm', cause });
    expect(e).to.be.instanceOf(GatewayError).and.instanceOf(Error);
    expect(isGatewayError(e)).to.equal(true);
    expect(e.cause).to.equal(cause);
    expect(isGatewayError({ status: 500, code: 'fake' })).to.equal(false);
    expect({ status: 500 }).not.to.be.instanceOf(GatewayError);
    expect(ourErrors.internal()).to.be.instanceOf(GatewayError);
  });

  it('a route-only plugin (no middleware) adds its route and leaves the chain alone', async () => {
    const gw = await startTestGateway(testConfig({ plugins: [fixture('route-only'), 'routing'] }));
    try {
      expect(await (await fetch(`${gw.url}/v1/hello`)).json()).to.deep.equal({ hello: 'world' });
      expect((await postJson(`${gw.url}/v1/chat/completions`, chat('hi'))).status).to.equal(200);
    } finally {
      await gw.stop();
    }
  });
});

describe('stream observer contract', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway(testConfig({ plugins: [fixture('redactor'), 'storage', 'routing'] }));
  });
  after(() => gw.stop());

  const stored = async (id: string) =>
    (await (await fetch(`${gw.url}/responses/${id}`)).json()) as {
      output: Array<{ content: Array<{ text: string }> }>;
    };

  it('a guard outside storage rewrites a stream: the client and the stored response both see only the redacted text', async () => {
    const res = await postJson(`${gw.url}/v1/chat/completions`, chat('the secret word', { stream: true }));
    const frames = sseData(await res.text());
    expect(frames.at(-1)).to.equal('[DONE]');
    const chunks = frames
      .slice(0, -1)
      .map((f) => JSON.parse(f) as { id: string; choices: Array<{ delta: { content?: string } }> });
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text).to.equal('Mock answer: the [redacted] word');
    expect(text).not.to.match(/secret/);
    const body = await stored(chunks[0].id);
    expect(body.output[0].content[0].text).to.equal('Mock answer: the [redacted] word');
  });

  it('a withheld chunk never reaches the client nor the observers after it (storage)', async () => {
    const res = await postJson(`${gw.url}/v1/chat/completions`, chat('keep DROPME keep', { stream: true }));
    const frames = sseData(await res.text());
    const chunks = frames
      .slice(0, -1)
      .map((f) => JSON.parse(f) as { id: string; choices: Array<{ delta: { content?: string } }> });
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text).not.to.contain('DROPME');
    expect(text).to.contain('keep');
    expect((await stored(chunks[0].id)).output[0].content[0].text).to.equal(text);
  });

  it('a plain answer is stored after every plugin outside storage has edited it', async () => {
    const res = await postJson(`${gw.url}/v1/chat/completions`, chat('a secret'));
    const body = (await res.json()) as { id: string; choices: Array<{ message: { content: string } }> };
    expect(body.choices[0].message.content).to.equal('Mock answer: a [redacted]');
    expect((await stored(body.id)).output[0].content[0].text).to.equal('Mock answer: a [redacted]');
  });
});
