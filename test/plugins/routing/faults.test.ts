import { expect } from 'chai';
import { startTestGateway, testConfig, postJson, sseData, type TestGateway } from '../../helpers/gateway';
import { MockUpstream, openaiFixtures, sendJson, writeSse } from '../../helpers/mock-upstream';
import { sdkClient } from '../../helpers/sdk';

const ok = (text: string) => openaiFixtures.completion(text);
const chat = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
});

describe('fallback and routing under upstream faults', () => {
  let a: MockUpstream;
  let b: MockUpstream;
  let gw: TestGateway;
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
            id: 'm/one',
            routing: { strategy: 'priority' },
            deployments: [{ provider: 'a', model: 'a-model', priority: 0 }],
          },
          {
            id: 'm/two',
            routing: { strategy: 'priority' },
            deployments: [
              { provider: 'a', model: 'a-model', priority: 0 },
              { provider: 'b', model: 'b-model', priority: 1 },
            ],
          },
          { id: 'm/backup', deployments: [{ provider: 'b', model: 'b-backup' }] },
          {
            id: 'm/small',
            context_length: 50,
            routing: { context_window_fallback: 'm/backup' },
            deployments: [{ provider: 'a', model: 'a-small' }],
          },
        ],
        plugins: [
          {
            fallback: {
              num_retries: 2,
              backoff_base_ms: 10,
              backoff_max_ms: 40,
              retry_after_max_ms: 300,
              cooldown: { failures: 100, window_ms: 1000, cooldown_ms: 1000 },
            },
          },
          { routing: { stream_idle_timeout_ms: 300 } },
        ],
      }),
    );
  });
  beforeEach(() => {
    a.requests.length = 0;
    b.requests.length = 0;
    a.handler = (_r, res) => sendJson(res, 200, ok('from a'));
    b.handler = (_r, res) => sendJson(res, 200, ok('from b'));
  });
  after(async () => {
    await gw.stop();
    await a.stop();
    await b.stop();
  });

  it('a burst of 500s is retried with backoff until it succeeds (3 upstream attempts)', async () => {
    a.enqueue(
      (_r, res) => sendJson(res, 500, { error: { message: 'boom' } }),
      (_r, res) => sendJson(res, 500, { error: { message: 'boom' } }),
    );
    const res = await postJson(`${gw.url}/v1/chat/completions`, chat('m/one'));
    expect(res.status).to.equal(200);
    expect(res.headers.get('x-gateway-attempts')).to.equal('3');
    expect(a.requests).to.have.length(3);
  });

  it('gives up after 1 + num_retries attempts and says why; the request can set num_retries', async () => {
    a.handler = (_r, res) => sendJson(res, 503, { error: { message: 'down' } });
    const res = await postJson(`${gw.url}/v1/chat/completions`, chat('m/one'));
    expect(res.status).to.equal(502);
    expect(a.requests).to.have.length(3);
    a.requests.length = 0;
    await postJson(`${gw.url}/v1/chat/completions`, chat('m/one', { num_retries: 0 }));
    expect(a.requests).to.have.length(1);
  });

  it('honours Retry-After on 429 (up to the cap) before retrying', async () => {
    a.enqueue((_r, res) => sendJson(res, 429, { error: { message: 'slow down' } }, { 'retry-after': '0.25' }));
    const t0 = Date.now();
    const res = await postJson(`${gw.url}/v1/chat/completions`, chat('m/one'));
    expect(res.status).to.equal(200);
    expect(Date.now() - t0).to.be.within(240, 1500);
    expect(a.requests).to.have.length(2);
  });

  it('never retries a 400', async () => {
    a.handler = (_r, res) => sendJson(res, 400, { error: { message: 'bad' } });
    const res = await postJson(`${gw.url}/v1/chat/completions`, chat('m/two'));
    expect(res.status).to.equal(400);
    expect(a.requests.length + b.requests.length).to.equal(1);
  });

  it('a connection reset moves to the next deployment', async () => {
    a.handler = (_r, res) => void res.socket?.destroy();
    const res = await postJson(`${gw.url}/v1/chat/completions`, chat('m/two', { num_retries: 1 }));
    expect(res.status).to.equal(200);
    expect(
      ((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content,
    ).to.equal('from b');
    expect(res.headers.get('x-gateway-deployment')).to.equal('b/b-model');
    expect(a.requests).to.have.length(1);
    expect(b.requests).to.have.length(1);
  });

  it('a slow first byte times out (timeout field) and falls back to the fallbacks list, whose model answers', async () => {
    a.handler = async (_r, res) => {
      await new Promise((r) => setTimeout(r, 1500));
      if (!res.destroyed) sendJson(res, 200, ok('late'));
    };
    const client = sdkClient(gw, 'x');
    const t0 = Date.now();
    const c = await client.chat.completions.create({
      model: 'm/one',
      messages: [{ role: 'user', content: 'hi' }],
      timeout: 0.3,
      num_retries: 0,
      fallbacks: ['m/backup'],
    } as never);
    expect(Date.now() - t0).to.be.lessThan(1400);
    expect(c.model).to.equal('m/backup');
    expect(c.choices[0].message.content).to.equal('from b');
  });

  it('OpenRouter models: [...] is the same as fallbacks, with parameter overrides in fallback objects', async () => {
    a.handler = (_r, res) => sendJson(res, 500, { error: { message: 'x' } });
    const r1 = await postJson(
      `${gw.url}/v1/chat/completions`,
      chat('m/one', { num_retries: 0, models: ['m/one', 'm/backup'] }),
    );
    expect(((await r1.json()) as { model: string }).model).to.equal('m/backup');
    await postJson(
      `${gw.url}/v1/chat/completions`,
      chat('m/one', { num_retries: 0, fallbacks: [{ model: 'm/backup', temperature: 0.1 }] }),
    );
    expect(b.requests[b.requests.length - 1].json).to.deep.include({ model: 'b-backup', temperature: 0.1 });
  });

  it('a context-window error goes to the context fallback at once; an over-long prompt goes there without trying', async () => {
    a.handler = (_r, res) =>
      sendJson(res, 400, {
        error: { message: "This model's maximum context length is 50 tokens", code: 'context_length_exceeded' },
      });
    const r1 = await postJson(`${gw.url}/v1/chat/completions`, chat('m/small'));
    expect(((await r1.json()) as { model: string }).model).to.equal('m/backup');
    expect(a.requests).to.have.length(1);
    a.requests.length = 0;
    const long = await postJson(`${gw.url}/v1/chat/completions`, {
      model: 'm/small',
      messages: [{ role: 'user', content: 'word '.repeat(100) }],
    });
    expect(((await long.json()) as { model: string }).model).to.equal('m/backup');
    expect(a.requests).to.have.length(0);
  });

  it('a stream that fails before any content falls back; role-only chunks are held', async () => {
    a.handler = (_r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(openaiFixtures.chunk({ role: 'assistant', content: '' }))}\n\n`);
      setTimeout(() => res.socket?.destroy(), 20);
    };
    b.handler = (_r, res) =>
      writeSse(res, [
        openaiFixtures.chunk({ role: 'assistant', content: '' }),
        openaiFixtures.chunk({ content: 'from b' }),
        openaiFixtures.chunk({}, 'stop'),
      ]);
    const frames = sseData(
      await (await postJson(`${gw.url}/v1/chat/completions`, chat('m/two', { stream: true, num_retries: 1 }))).text(),
    );
    expect(frames.pop()).to.equal('[DONE]');
    const text = frames
      .map(
        (f) => (JSON.parse(f) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? '',
      )
      .join('');
    expect(text).to.equal('from b');
    expect(frames.filter((f) => f.includes('"role":"assistant"'))).to.have.length(1);
  });

  it('a stream that stalls before first content times out (idle timeout) and falls back', async () => {
    a.handler = (_r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(openaiFixtures.chunk({ role: 'assistant', content: '' }))}\n\n`); // then nothing
    };
    b.handler = (_r, res) =>
      writeSse(res, [openaiFixtures.chunk({ role: 'assistant', content: 'b!' }), openaiFixtures.chunk({}, 'stop')]);
    const t0 = Date.now();
    const body = await (
      await postJson(`${gw.url}/v1/chat/completions`, chat('m/two', { stream: true, num_retries: 1 }))
    ).text();
    expect(Date.now() - t0).to.be.within(250, 2000);
    expect(body).to.include('b!').and.include('[DONE]');
  });

  it('a stream that stalls after content ends with one error event, no fallback', async () => {
    a.handler = (_r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(openaiFixtures.chunk({ role: 'assistant', content: 'part' }))}\n\n`);
    };
    const frames = sseData(
      await (await postJson(`${gw.url}/v1/chat/completions`, chat('m/two', { stream: true, num_retries: 1 }))).text(),
    );
    expect(frames).to.not.include('[DONE]');
    expect((JSON.parse(frames[frames.length - 1]) as { error: { code: string } }).error.code).to.equal(
      'upstream_timeout',
    );
    expect(b.requests).to.have.length(0);
  });
});
