import { expect } from 'chai';
import OpenAI from 'openai';
import { startTestGateway, testConfig, postJson, sseData, type TestGateway } from '../helpers/gateway';
import { MockUpstream, openaiFixtures, sendJson, writeSse } from '../helpers/mock-upstream';
import { sdkClient, startSdkGateway } from '../helpers/sdk';

const MODEL = 'mock/gpt-4o-mini';

describe('chat completions and models (core, with the openai SDK)', () => {
  let gw: TestGateway;
  let client: OpenAI;
  before(async () => ({ gw, client } = await startSdkGateway()));
  after(() => gw.stop());

  it('answers a plain request in OpenAI shape', async () => {
    const c = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Hello there, gateway!' }],
    });
    expect(c.object).to.equal('chat.completion');
    expect(c.id).to.match(/^chatcmpl-/);
    expect(c.model).to.equal(MODEL);
    expect(c.choices[0].message).to.include({ role: 'assistant', content: 'Mock answer: Hello there, gateway!' });
    expect(c.choices[0].finish_reason).to.equal('stop');
    // prompt: 3 priming + 3 framing + 5 pieces (Hello there , gateway !); completion: Mock answer : Hello there , gateway !
    expect(c.usage).to.deep.include({ prompt_tokens: 11, completion_tokens: 8, total_tokens: 19 });
  });

  it('streams with include_usage: usage null on every chunk, one usage chunk with empty choices before [DONE]', async () => {
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Hello there, gateway!' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    const last = chunks[chunks.length - 1];
    expect(last.choices).to.deep.equal([]);
    expect(last.usage).to.deep.include({ prompt_tokens: 11, completion_tokens: 8, total_tokens: 19 });
    for (const c of chunks.slice(0, -1)) expect(c.usage).to.equal(null);
    expect(chunks[0].choices[0].delta.role).to.equal('assistant');
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).to.equal(
      'Mock answer: Hello there, gateway!',
    );
    expect(chunks.filter((c) => c.choices[0]?.finish_reason).map((c) => c.choices[0].finish_reason)).to.deep.equal([
      'stop',
    ]);
    expect(new Set(chunks.map((c) => c.id)).size).to.equal(1);
  });

  it('frames a stream exactly as data: <json>\\n\\n ending with data: [DONE], with no usage chunk unless asked', async () => {
    const res = await postJson(`${gw.url}/v1/chat/completions`, {
      model: MODEL,
      stream: true,
      messages: [{ role: 'user', content: 'one two three' }],
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
    const body = await res.text();
    expect(body.endsWith('data: [DONE]\n\n')).to.equal(true);
    const frames = sseData(body);
    expect(frames.pop()).to.equal('[DONE]');
    for (const f of frames) {
      const chunk = JSON.parse(f);
      expect(chunk.object).to.equal('chat.completion.chunk');
      expect(chunk.usage).to.equal(null);
      expect(chunk.choices).to.have.length(1);
    }
  });

  it('lists models and retrieves one whose id contains a slash', async () => {
    const list = await client.models.list();
    expect(list.data).to.deep.equal([{ id: MODEL, object: 'model', created: 1715367049, owned_by: 'mock' }]);
    expect(await client.models.retrieve(MODEL)).to.deep.equal({
      id: MODEL,
      object: 'model',
      created: 1715367049,
      owned_by: 'mock',
    });
  });

  it('unknown model: NotFoundError for retrieve and for chat, with the spec error object', async () => {
    try {
      await client.models.retrieve('no/such-model');
      expect.fail('should throw');
    } catch (e) {
      expect(e).to.be.instanceOf(OpenAI.NotFoundError);
      expect((e as InstanceType<typeof OpenAI.NotFoundError>).code).to.equal('model_not_found');
    }
    const res = await postJson(`${gw.url}/v1/chat/completions`, { model: 'no/such', messages: [] });
    expect(res.status).to.equal(404);
    const body = (await res.json()) as { error: Record<string, unknown> };
    expect(Object.keys(body.error).sort()).to.deep.equal(['code', 'message', 'param', 'type']);
    for (const v of Object.values(body.error)) expect(v).to.be.a('string');
    await client.chat.completions.create({ model: 'no/such', messages: [{ role: 'user', content: 'x' }] }).then(
      () => expect.fail('should throw'),
      (e: unknown) => expect(e).to.be.instanceOf(OpenAI.NotFoundError),
    );
  });

  it('bad input: invalid JSON 400, non-object 400, missing fields 400, stream_options without stream 400, over the body limit 413', async () => {
    const url = `${gw.url}/v1/chat/completions`;
    const bad = await postJson(url, '{"model": ');
    expect(bad.status).to.equal(400);
    expect(((await bad.json()) as { error: { code: string } }).error.code).to.equal('invalid_json');
    expect((await postJson(url, '[1,2]')).status).to.equal(400);
    const missing = (await (await postJson(url, {})).json()) as { error: { param: string; message: string } };
    expect(missing.error.param).to.equal('model');
    expect(missing.error.message).to.match(/model is required.*messages is required/);
    const so = await postJson(url, { model: MODEL, messages: [], stream_options: { include_usage: true } });
    expect(so.status).to.equal(400);
    expect(((await so.json()) as { error: { param: string } }).error.param).to.equal('stream_options');
    await client.chat.completions
      .create({ model: MODEL, messages: [{ role: 'user', content: 'x' }], stream_options: { include_usage: true } })
      .then(
        () => expect.fail('should throw'),
        (e: unknown) => expect(e).to.be.instanceOf(OpenAI.BadRequestError),
      );
    // The default limit (20 MB) takes a request with several screenshots; one byte more than it is a 413.
    const image = (mb: number) => ({
      type: 'image_url',
      image_url: { url: `data:image/png;base64,${Buffer.alloc(mb * 1024 * 1024, 1).toString('base64')}` },
    });
    const images = await postJson(url, {
      model: MODEL,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'what are these' }, image(3), image(3), image(3), image(3)] },
      ],
    });
    expect(images.status).to.equal(200);
    const big = await postJson(url, {
      model: MODEL,
      messages: [{ role: 'user', content: 'x'.repeat(20 * 1024 * 1024 + 10) }],
    });
    expect(big.status).to.equal(413);
    expect(((await big.json()) as { error: { code: string } }).error.code).to.equal('request_too_large');
  });

  it('echoes a sane X-Request-Id or makes one; unknown routes are 404 error objects; /health and /ready answer', async () => {
    const r1 = await fetch(`${gw.url}/v1/models`, { headers: { 'x-request-id': 'abc-123' } });
    expect(r1.headers.get('x-request-id')).to.equal('abc-123');
    const r2 = await fetch(`${gw.url}/v1/models`, { headers: { 'x-request-id': 'bad id\twith tab' } });
    expect(r2.headers.get('x-request-id')).to.match(/^req_[A-Za-z0-9_-]{24}$/);
    const nf = await fetch(`${gw.url}/v1/nothing`);
    expect(nf.status).to.equal(404);
    expect(((await nf.json()) as { error: { code: string } }).error.code).to.equal('not_found');
    expect(await (await fetch(`${gw.url}/health`)).json()).to.deep.equal({ status: 'ok' });
    expect(await (await fetch(`${gw.url}/ready`)).json()).to.deep.equal({ status: 'ready', store: 'sqlite' });
  });

  it('writes JSON access logs without the Authorization header or key', async () => {
    const secret = 'sk-canary-core-0123456789';
    await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${secret}` } });
    const lines = gw.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.some((l) => l.msg === 'request' && l.path === '/v1/models' && l.status === 200)).to.equal(true);
    expect(gw.logs.join('\n')).to.not.include(secret);
  });
});

describe('chat completions through an OpenAI-compatible upstream', () => {
  let up: MockUpstream;
  let gw: TestGateway;
  let client: OpenAI;
  before(async () => {
    up = await new MockUpstream().start();
    gw = await startTestGateway(
      testConfig({
        providers: [{ name: 'up', type: 'openai', api_base: `${up.url}/v1`, api_key: 'sk-upstream-secret-xyz' }],
        models: [{ id: 'up/gpt', owned_by: 'up', deployments: [{ provider: 'up', model: 'gpt-4o-mini' }] }],
      }),
    );
    client = sdkClient(gw);
  });
  afterEach(() => {
    up.requests.length = 0;
  });
  after(async () => {
    await gw.stop();
    await up.stop();
  });

  it('forwards unknown fields unchanged, consumes the gateway fields, maps the model name, sends the provider key', async () => {
    up.enqueue((_req, res) => sendJson(res, 200, openaiFixtures.completion('hi there')));
    const body = {
      model: 'up/gpt',
      messages: [{ role: 'user', content: 'x' }],
      temperature: 0.3,
      some_vendor_flag: { a: 1 },
      safe_prompt: true,
      timeout: 30,
      metadata: { run: 7 },
      headers: { 'x-h': '1' },
      num_retries: 0,
      fallbacks: [],
      api_base: 'http://evil',
      api_key: 'sk-client',
    };
    const res = await postJson(`${gw.url}/v1/chat/completions`, body);
    expect(res.status).to.equal(200);
    const sent = up.requests[0];
    expect(sent.path).to.equal('/v1/chat/completions');
    expect(sent.headers.authorization).to.equal('Bearer sk-upstream-secret-xyz');
    expect(sent.json).to.deep.equal({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'x' }],
      temperature: 0.3,
      some_vendor_flag: { a: 1 },
      safe_prompt: true,
    });
    const c = (await res.json()) as { model: string; id: string; choices: Array<{ message: { content: string } }> };
    expect(c.model).to.equal('up/gpt');
    expect(c.id).to.match(/^chatcmpl-/);
    expect(c.choices[0].message.content).to.equal('hi there');
  });

  it('streams the upstream chunks through and always asks the upstream for usage', async () => {
    up.enqueue((_req, res) =>
      writeSse(res, [
        openaiFixtures.chunk({ role: 'assistant', content: '' }),
        openaiFixtures.chunk({ content: 'Hel' }),
        openaiFixtures.chunk({ content: 'lo' }),
        openaiFixtures.chunk({}, 'stop'),
        openaiFixtures.usageChunk(5, 2),
      ]),
    );
    const stream = await client.chat.completions.create({
      model: 'up/gpt',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
    });
    let text = '';
    let sawUsage = false;
    for await (const c of stream) {
      text += c.choices[0]?.delta.content ?? '';
      if (c.usage) sawUsage = true;
    }
    expect(text).to.equal('Hello');
    expect(sawUsage).to.equal(false);
    expect((up.requests[0].json as { stream_options: unknown }).stream_options).to.deep.equal({ include_usage: true });
  });

  it('maps upstream errors to the right SDK error class without leaking upstream secrets', async () => {
    up.enqueue((_req, res) =>
      sendJson(
        res,
        429,
        { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } },
        { 'retry-after': '7' },
      ),
    );
    const e1 = await client.chat.completions
      .create({ model: 'up/gpt', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(e1).to.be.instanceOf(OpenAI.RateLimitError);
    expect((e1 as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after')).to.equal('7');
    up.enqueue((_req, res) =>
      sendJson(res, 400, {
        error: {
          message: "Invalid value for 'temperature'",
          type: 'invalid_request_error',
          param: 'temperature',
          code: null,
        },
      }),
    );
    const e2 = await client.chat.completions
      .create({ model: 'up/gpt', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(e2).to.be.instanceOf(OpenAI.BadRequestError);
    expect((e2 as Error).message).to.include("Invalid value for 'temperature'");
    up.enqueue((_req, res) =>
      sendJson(res, 401, { error: { message: 'Incorrect API key provided: sk-upstr**********-xyz' } }),
    );
    const e3 = await client.chat.completions
      .create({ model: 'up/gpt', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(e3).to.be.instanceOf(OpenAI.InternalServerError);
    expect((e3 as InstanceType<typeof OpenAI.APIError>).status).to.equal(502);
    expect((e3 as Error).message).to.not.match(/sk-upstr/);
    expect((e3 as InstanceType<typeof OpenAI.APIError>).code).to.equal('upstream_auth_failed');
    up.enqueue((_req, res) => sendJson(res, 503, { error: { message: 'overloaded' } }));
    const e4 = await client.chat.completions
      .create({ model: 'up/gpt', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect((e4 as InstanceType<typeof OpenAI.APIError>).status).to.equal(502);
  });

  it('an upstream that times out is a 504', async () => {
    up.enqueue(async (_req, res) => {
      await new Promise((r) => setTimeout(r, 3000));
      if (!res.destroyed) sendJson(res, 200, openaiFixtures.completion('late'));
    });
    const res = await postJson(`${gw.url}/v1/chat/completions`, {
      model: 'up/gpt',
      messages: [{ role: 'user', content: 'x' }],
      timeout: 0.3,
    });
    expect(res.status).to.equal(504);
    expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('upstream_timeout');
  });

  it('a stream that breaks upstream ends with one error event and no [DONE]', async () => {
    up.enqueue((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(openaiFixtures.chunk({ role: 'assistant', content: 'partial' }))}\n\n`);
      setTimeout(() => res.socket?.destroy(), 50);
    });
    const res = await postJson(`${gw.url}/v1/chat/completions`, {
      model: 'up/gpt',
      stream: true,
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(res.status).to.equal(200);
    const frames = sseData(await res.text());
    expect(frames).to.not.include('[DONE]');
    const last = JSON.parse(frames[frames.length - 1]) as { error: { code: string; type: string } };
    expect(last.error.code).to.equal('stream_interrupted');
    expect(JSON.parse(frames[0]).choices[0].delta.content).to.equal('partial');
  });

  it('a stream the upstream closes without [DONE] is not a success either', async () => {
    up.enqueue((_req, res) =>
      writeSse(res, [openaiFixtures.chunk({ role: 'assistant', content: 'cut' })], { done: false }),
    );
    const frames = sseData(
      await (
        await postJson(`${gw.url}/v1/chat/completions`, {
          model: 'up/gpt',
          stream: true,
          messages: [{ role: 'user', content: 'x' }],
        })
      ).text(),
    );
    expect(frames).to.not.include('[DONE]');
    expect(JSON.parse(frames[frames.length - 1]).error.code).to.equal('stream_interrupted');
  });

  it('the client going away aborts the upstream request at once', async () => {
    let upstreamClosed!: () => void;
    const closed = new Promise<void>((r) => (upstreamClosed = r));
    up.enqueue((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(openaiFixtures.chunk({ role: 'assistant', content: 'first' }))}\n\n`);
      res.on('close', () => upstreamClosed());
    });
    const ac = new AbortController();
    const res = await postJson(`${gw.url}/v1/chat/completions`, {
      model: 'up/gpt',
      stream: true,
      messages: [{ role: 'user', content: 'x' }],
    }).then((r) => r);
    const reader = res.body!.getReader();
    await reader.read();
    ac.abort();
    await reader.cancel();
    const t0 = Date.now();
    await closed;
    expect(Date.now() - t0).to.be.lessThan(1000);
  });
});
