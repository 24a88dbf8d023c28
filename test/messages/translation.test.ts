import { expect } from 'chai';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, testConfig, type TestGateway } from '../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../helpers/accounts';
import { MockUpstream, openaiFixtures, sendJson, writeSse } from '../helpers/mock-upstream';

/**
 * POST /v1/messages on a provider that is not Anthropic (issue 45): the official Anthropic SDK against the gateway,
 * translated onto an OpenAI-compatible loopback upstream; every guard of the chat chain applies.
 */
describe('/v1/messages translated onto an OpenAI-compatible upstream (the official Anthropic SDK)', function () {
  this.timeout(30000);
  const up = new MockUpstream();
  let gw: TestGateway;
  let key: string;
  let client: Anthropic;
  const sent = (): Record<string, unknown> => up.requests[up.requests.length - 1].json as Record<string, unknown>;

  before(async () => {
    await up.start();
    gw = await startTestGateway(
      testConfig(
        {
          providers: [{ name: 'up', type: 'openai', api_base: `${up.url}/v1`, api_key: 'sk-upstream-secret-123' }],
          models: [
            {
              id: 'team/claude-like',
              context_length: 100000,
              pricing: { prompt: 0.000001, completion: 0.000002 },
              deployments: [{ provider: 'up', model: 'gpt-4o-mini' }],
            },
          ],
          plugins: ['auth', 'params', 'fallback', 'limits', 'credit', 'routing'],
        },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
    key = (await makeAccountKey(gw, { credits: 100 })).key;
    client = new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });
  });
  after(async () => {
    await gw.stop();
    await up.stop();
  });

  it('plain: system, messages and sampling reach the upstream as chat; the answer is a Message with usage', async () => {
    up.handler = (_r, res) => sendJson(res, 200, openaiFixtures.completion('Hello from the upstream'));
    const m = await client.messages.create({
      model: 'team/claude-like',
      max_tokens: 300,
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: 'Say hello' }],
      stop_sequences: ['END'],
      metadata: { user_id: 'u-42' },
    });
    expect(m.type).to.equal('message');
    expect(m.role).to.equal('assistant');
    expect(m.id).to.match(/^msg_/);
    expect(m.content).to.deep.equal([{ type: 'text', text: 'Hello from the upstream' }]);
    expect(m.stop_reason).to.equal('end_turn');
    expect(m.usage.input_tokens).to.equal(19);
    expect(m.usage.output_tokens).to.equal(10);
    const body = sent();
    expect(body.max_tokens).to.equal(300);
    expect(body.stop).to.deep.equal(['END']);
    expect(body.user).to.equal('u-42');
    expect((body.messages as Array<{ role: string }>).map((x) => x.role)).to.deep.equal(['system', 'user']);
  });

  it('anthropic-version: sampling fields pass under 2023-06-01 and are refused under the current SDK version', async () => {
    up.handler = (_r, res) => sendJson(res, 200, openaiFixtures.completion('ok'));
    const post = (version: string) =>
      fetch(`${gw.url}/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'anthropic-version': version, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'team/claude-like',
          max_tokens: 5,
          temperature: 0.3,
          top_p: 0.9,
          messages: [{ role: 'user', content: 'x' }],
        }),
      });
    expect((await post('2023-06-01')).status).to.equal(200);
    expect(sent()).to.include({ temperature: 0.3, top_p: 0.9 });
    const refused = await post('2026-10-21');
    expect(refused.status).to.equal(400);
    const e = (await refused.json()) as { type: string; error: { type: string; message: string } };
    expect(e.type).to.equal('error');
    expect(e.error.type).to.equal('invalid_request_error');
    expect(e.error.message).to.match(/temperature/);
  });

  it('streamed: the SDK assembles the same Message from the event sequence', async () => {
    up.handler = (_r, res) =>
      void writeSse(res, [
        openaiFixtures.chunk({ role: 'assistant', content: '' }),
        openaiFixtures.chunk({ content: 'Hel' }),
        openaiFixtures.chunk({ content: 'lo' }),
        openaiFixtures.chunk({}, 'stop'),
        openaiFixtures.usageChunk(12, 2),
      ]);
    const events: string[] = [];
    const stream = client.messages.stream({
      model: 'team/claude-like',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'Say hello' }],
    });
    stream.on('streamEvent', (e) => events.push(e.type));
    const m = await stream.finalMessage();
    expect(m.content.map((b) => b.type)).to.deep.equal(['text']);
    expect((m.content[0] as Anthropic.TextBlock).text).to.equal('Hello');
    expect(m.stop_reason).to.equal('end_turn');
    expect(m.usage.output_tokens).to.equal(2);
    expect(m.usage.input_tokens).to.equal(12);
    expect(events[0]).to.equal('message_start');
    expect(events).to.include.members(['content_block_start', 'content_block_delta', 'content_block_stop']);
    expect(events.slice(-2)).to.deep.equal(['message_delta', 'message_stop']);
  });

  it('tools: a tool call comes back as tool_use with its input; the tool_result turn reaches the upstream as a tool message', async () => {
    up.handler = (_r, res) =>
      sendJson(res, 200, {
        ...openaiFixtures.completion(''),
        choices: [
          {
            index: 0,
            finish_reason: 'tool_calls',
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [
                { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
              ],
            },
          },
        ],
      });
    const tools: Anthropic.Tool[] = [
      {
        name: 'weather',
        description: 'Weather now',
        input_schema: { type: 'object', properties: { city: { type: 'string' } } },
      },
    ];
    const first = await client.messages.create({
      model: 'team/claude-like',
      max_tokens: 100,
      tools,
      tool_choice: { type: 'any' },
      messages: [{ role: 'user', content: 'Weather in Oslo?' }],
    });
    expect(first.stop_reason).to.equal('tool_use');
    expect(first.content).to.deep.equal([{ type: 'tool_use', id: 'call_1', name: 'weather', input: { city: 'Oslo' } }]);
    expect(sent().tool_choice).to.equal('required');
    expect((sent().tools as Array<{ function: { name: string } }>)[0].function.name).to.equal('weather');
    up.handler = (_r, res) => sendJson(res, 200, openaiFixtures.completion('It is 3 degrees.'));
    const second = await client.messages.create({
      model: 'team/claude-like',
      max_tokens: 100,
      tools,
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: '3 C' }] },
      ],
    });
    expect(second.content).to.deep.equal([{ type: 'text', text: 'It is 3 degrees.' }]);
    const msgs = sent().messages as Array<Record<string, unknown>>;
    expect(msgs.map((x) => x.role)).to.deep.equal(['user', 'assistant', 'tool']);
    expect(msgs[1].tool_calls).to.deep.equal([
      { id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } },
    ]);
    expect(msgs[2]).to.include({ tool_call_id: 'call_1', content: '3 C' });
  });

  it('thinking: reasoning the upstream streams comes back as a thinking block before the text', async () => {
    up.handler = (_r, res) =>
      void writeSse(res, [
        openaiFixtures.chunk({ role: 'assistant', reasoning_content: 'Let me think.' }),
        openaiFixtures.chunk({ content: 'Four.' }),
        openaiFixtures.chunk({}, 'stop'),
        openaiFixtures.usageChunk(9, 6),
      ]);
    const m = await client.messages
      .stream({
        model: 'team/claude-like',
        max_tokens: 2000,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [{ role: 'user', content: '2+2?' }],
      })
      .finalMessage();
    expect(m.content.map((b) => b.type)).to.deep.equal(['thinking', 'text']);
    expect((m.content[0] as Anthropic.ThinkingBlock).thinking).to.equal('Let me think.');
    expect((m.content[1] as Anthropic.TextBlock).text).to.equal('Four.');
  });

  it('count_tokens: the gateway estimate, said so in a header; nothing reaches the upstream', async () => {
    const before = up.requests.length;
    const r = await client.messages
      .countTokens({ model: 'team/claude-like', messages: [{ role: 'user', content: 'How many tokens is this?' }] })
      .withResponse();
    expect(r.data.input_tokens).to.be.greaterThan(5);
    expect(r.response.headers.get('x-gateway-token-count')).to.equal('estimate');
    expect(up.requests.length).to.equal(before);
  });

  it("errors come in Anthropic's shape: a bad key, an unknown model, no credit, a disallowed model, a broken stream", async () => {
    const bad = new Anthropic({ baseURL: gw.url, apiKey: 'sk-not-a-key-000000000000', maxRetries: 0 });
    const err401 = await bad.messages
      .create({ model: 'team/claude-like', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err401).to.be.instanceOf(Anthropic.AuthenticationError);
    expect((err401 as InstanceType<typeof Anthropic.APIError>).error).to.deep.include({ type: 'error' });
    const err404 = await client.messages
      .create({ model: 'no/such', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err404).to.be.instanceOf(Anthropic.NotFoundError);
    const poor = await makeAccountKey(gw, { credits: 0 });
    const raw = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': poor.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'team/claude-like', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(raw.status).to.equal(402);
    expect(((await raw.json()) as { type: string; error: { type: string } }).error.type).to.equal('billing_error');
    const limited = await makeAccountKey(gw);
    await adminCall(gw, 'PUT', `/v1/keys/${limited.hash}/limits`, { allowed_models: ['other/*'] });
    const denied = await new Anthropic({ baseURL: gw.url, apiKey: limited.key, maxRetries: 0 }).messages
      .create({ model: 'team/claude-like', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(denied).to.be.instanceOf(Anthropic.PermissionDeniedError);
    up.handler = (_r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(openaiFixtures.chunk({ content: 'partial' }))}\n\n`);
      setTimeout(() => res.destroy(), 20);
    };
    const text = await (
      await fetch(`${gw.url}/v1/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'team/claude-like',
          max_tokens: 5,
          stream: true,
          messages: [{ role: 'user', content: 'x' }],
        }),
      })
    ).text();
    expect(text).to.contain('event: message_start');
    expect(text).to.contain('"text_delta"');
    expect(text).to.match(/event: error\ndata: \{"type":"error","error":\{"type":"[a-z_]+"/);
    expect(text).not.to.contain('message_stop');
  });

  it('x-api-key and Authorization: Bearer both authenticate; anthropic-version and anthropic-beta are accepted', async () => {
    up.handler = (_r, res) => sendJson(res, 200, openaiFixtures.completion('ok'));
    for (const headers of [{ 'x-api-key': key }, { authorization: `Bearer ${key}` }] as Array<Record<string, string>>) {
      const r = await fetch(`${gw.url}/v1/messages?beta=true`, {
        method: 'POST',
        headers: {
          ...headers,
          'anthropic-version': '2023-06-01',
          'anthropic-beta': 'interleaved-thinking-2025-05-14',
          'content-type': 'application/json',
        },
        body: JSON.stringify({ model: 'team/claude-like', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }),
      });
      expect(r.status).to.equal(200);
    }
  });
});
