import { expect } from 'chai';
import type { ServerResponse } from 'node:http';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, testConfig, type TestGateway } from '../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../helpers/accounts';
import { MockUpstream, openaiFixtures, sendJson, type RecordedRequest } from '../helpers/mock-upstream';
import { settled } from '../plugins/credit/books';
import { countTextTokens } from '../../src/tokens/count';

type Json = Record<string, unknown>;

/** Prices a token, in nano-credits: input, output, cache reads and cache writes apart (as Anthropic bills them). */
const PRICE = { prompt: 3000, completion: 15000, cache_read: 300, cache_write: 3750 };
const PRICING = { prompt: 0.000003, completion: 0.000015, cache_read: 0.0000003, cache_write: 0.00000375 };

/** One SSE event as Anthropic writes it (https://docs.anthropic.com/en/docs/build-with-claude/streaming). */
const sse = (data: Json) => `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;

/** Anthropic's documented stream with extended thinking and a tool call, usage with cache reads and writes. */
function thinkingToolStream(model: string): string {
  return [
    sse({
      type: 'message_start',
      message: {
        id: 'msg_01UpstreamStream',
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 12, cache_creation_input_tokens: 300, cache_read_input_tokens: 2000, output_tokens: 1 },
      },
    }),
    sse({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
    sse({ type: 'ping' }),
    sse({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'The user wants ' } }),
    sse({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'the weather.' } }),
    sse({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'signature_delta', signature: 'EqQBCgIYAhIM1gbcDa9G' },
    }),
    sse({ type: 'content_block_stop', index: 0 }),
    sse({ type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } }),
    sse({ type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Let me check.' } }),
    sse({ type: 'content_block_stop', index: 1 }),
    sse({
      type: 'content_block_start',
      index: 2,
      content_block: { type: 'tool_use', id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather', input: {} },
    }),
    sse({ type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"location": ' } }),
    sse({ type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '"Oslo"}' } }),
    sse({ type: 'content_block_stop', index: 2 }),
    sse({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { output_tokens: 89 },
    }),
    sse({ type: 'message_stop' }),
  ].join('');
}

/**
 * POST /v1/messages on an Anthropic upstream (issue 45): passthrough through the same-wire hook. The official SDK
 * against the gateway, an Anthropic mock built from Anthropic's docs: the mock receives exactly what the client sent
 * (the deployment's model in place of the client's), the client gets exactly the upstream's answer and event bytes,
 * and the chain still applies (credit from the reported usage, cache reads and writes priced; records; limits).
 */
describe('/v1/messages passthrough to an Anthropic upstream (the official Anthropic SDK)', function () {
  this.timeout(30000);
  const up = new MockUpstream();
  const other = new MockUpstream();
  let gw: TestGateway;
  let client: Anthropic;
  let key: { key: string; accountId: string; hash: string };
  const last = (): RecordedRequest => up.requests[up.requests.length - 1];

  before(async () => {
    await up.start();
    await other.start();
    gw = await startTestGateway(
      testConfig(
        {
          providers: [
            { name: 'claude', type: 'anthropic', api_base: up.url, api_key: 'sk-ant-upstream-secret-123' },
            { name: 'compat', type: 'openai', api_base: `${other.url}/v1`, api_key: 'sk-compat' },
          ],
          models: [
            {
              id: 'team/claude',
              context_length: 200000,
              pricing: PRICING,
              deployments: [{ provider: 'claude', model: 'claude-sonnet-4-5-20250929' }],
            },
            {
              id: 'team/claude-or-compat',
              context_length: 200000,
              pricing: PRICING,
              deployments: [
                { provider: 'claude', model: 'claude-sonnet-4-5-20250929' },
                { provider: 'compat', model: 'gpt-4o-mini' },
              ],
            },
            {
              id: 'team/compat',
              context_length: 200000,
              pricing: PRICING,
              deployments: [{ provider: 'compat', model: 'gpt-4o-mini' }],
            },
          ],
          plugins: ['auth', 'params', 'fallback', 'limits', 'credit', 'storage', 'routing'],
        },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
    key = await makeAccountKey(gw, { credits: 100 });
    client = new Anthropic({ baseURL: gw.url, apiKey: key.key, maxRetries: 0 });
  });
  after(async () => {
    await gw.stop();
    await up.stop();
    await other.stop();
  });

  /** The newest generation record of the account, once its credit is settled. */
  async function record() {
    await settled(gw, key.accountId);
    const [g] = await gw.services.store.generations.list({ accountId: key.accountId, limit: 1 });
    return g;
  }

  /** A conversation with everything Anthropic's wire carries that a translation would reshape or drop. */
  const rich = {
    model: 'team/claude',
    max_tokens: 2048,
    system: [
      { type: 'text', text: 'You are a weather bot.' },
      { type: 'text', text: 'Long shared context. '.repeat(40), cache_control: { type: 'ephemeral', ttl: '1h' } },
    ],
    thinking: { type: 'enabled', budget_tokens: 1024 },
    tools: [
      {
        name: 'get_weather',
        description: 'The weather in a city',
        input_schema: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
        cache_control: { type: 'ephemeral' },
      },
      { type: 'web_search_20250305', name: 'web_search', max_uses: 2 },
    ],
    tool_choice: { type: 'auto' },
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Weather in Oslo? Here is a map and a report.' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Report: cold.' }, title: 'r' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'I should call the tool.', signature: 'EqQBCgIYAhIMsig1' },
          { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix' },
          { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { location: 'Oslo' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_01A', content: [{ type: 'text', text: '-3 C, snow' }] },
          { type: 'text', text: 'And tomorrow?', cache_control: { type: 'ephemeral' } },
        ],
      },
    ],
    metadata: { user_id: 'u-7' },
    // Fields this gateway does not know: they reach Anthropic as sent.
    context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
    output_config: { effort: 'medium' },
  };

  it('plain: the upstream gets the body as sent (model replaced) and the headers; the client gets its answer as it came', async () => {
    const answer = {
      id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5-20250929',
      content: [
        { type: 'thinking', thinking: 'Tomorrow: look it up.', signature: 'EqQBCgIYAhIMsig2' },
        { type: 'text', text: 'Tomorrow: -5 C.', citations: null },
      ],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: {
        input_tokens: 25,
        cache_creation_input_tokens: 400,
        cache_read_input_tokens: 1500,
        cache_creation: { ephemeral_5m_input_tokens: 400, ephemeral_1h_input_tokens: 0 },
        output_tokens: 60,
        service_tier: 'standard',
      },
      container: null,
    };
    const bytes = JSON.stringify(answer, null, 2); // the upstream's own formatting, kept
    up.handler = (_r, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_upstream' });
      res.end(bytes);
    };
    const m = await client.beta.messages.create(rich as unknown as Anthropic.Beta.MessageCreateParamsNonStreaming, {
      headers: { 'anthropic-beta': 'context-management-2025-06-27,extended-cache-ttl-2025-04-11' },
    });
    expect(m).to.deep.equal(answer);
    const sent = last();
    expect(sent.path).to.equal('/v1/messages');
    expect(sent.json).to.deep.equal({ ...rich, model: 'claude-sonnet-4-5-20250929' });
    expect(sent.headers['anthropic-version']).to.equal('2026-10-21'); // the SDK's, unchanged
    expect(sent.headers['anthropic-beta']).to.equal('context-management-2025-06-27,extended-cache-ttl-2025-04-11');
    expect(sent.headers['x-api-key']).to.equal('sk-ant-upstream-secret-123');
    expect(sent.headers.authorization).to.equal(undefined);

    // Byte for byte, with the gateway's headers; nothing named as dropped (everything went).
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify(rich),
    });
    expect(res.status).to.equal(200);
    expect(await res.text()).to.equal(bytes);
    expect(res.headers.get('x-gateway-dropped-params')).to.equal(null);
    expect(res.headers.get('x-request-id')).to.be.a('string');
    expect(last().headers['anthropic-version']).to.equal('2023-06-01');
    // The gateway's own fields are the gateway's: they steer it and never reach Anthropic (metadata is Anthropic's).
    const steered = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ ...rich, timeout: 30, num_retries: 0, fallbacks: ['team/compat'] }),
    });
    expect(steered.status).to.equal(200);
    expect(last().json).to.deep.equal({ ...rich, model: 'claude-sonnet-4-5-20250929' });

    const g = await record();
    expect(g).to.include({ promptTokens: 1925, cachedTokens: 1500, cacheWriteTokens: 400, completionTokens: 60 });
    expect(g.cost).to.equal(
      25 * PRICE.prompt + 1500 * PRICE.cache_read + 400 * PRICE.cache_write + 60 * PRICE.completion,
    );
  });

  it('streamed: thinking with signatures, text and a tool call reach the client as the upstream sent each event', async () => {
    const raw = thinkingToolStream('claude-sonnet-4-5-20250929');
    up.handler = (_r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
      res.end(raw);
    };
    const stream = client.messages.stream({ ...(rich as unknown as Anthropic.MessageCreateParams), stream: undefined });
    const types: string[] = [];
    stream.on('streamEvent', (e) => types.push(e.type));
    const m = await stream.finalMessage();
    expect(last().json).to.deep.equal({ ...rich, model: 'claude-sonnet-4-5-20250929', stream: true });
    expect(m.id).to.equal('msg_01UpstreamStream');
    expect(m.content).to.deep.equal([
      { type: 'thinking', thinking: 'The user wants the weather.', signature: 'EqQBCgIYAhIM1gbcDa9G' },
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_use', id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather', input: { location: 'Oslo' } },
    ]);
    expect(m.usage).to.include({ input_tokens: 12, cache_read_input_tokens: 2000, cache_creation_input_tokens: 300 });
    expect(m.usage.output_tokens).to.equal(89);
    expect(types[0]).to.equal('message_start');

    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${key.key}`,
        'anthropic-version': '2023-06-01',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ ...rich, stream: true }),
    });
    expect(res.headers.get('content-type')).to.match(/^text\/event-stream/);
    expect(await res.text()).to.equal(raw);
    const g = await record();
    expect(g).to.include({ promptTokens: 2312, cachedTokens: 2000, cacheWriteTokens: 300, completionTokens: 89 });
    expect(g.status).to.equal('completed');
    expect(g.cost).to.equal(
      12 * PRICE.prompt + 2000 * PRICE.cache_read + 300 * PRICE.cache_write + 89 * PRICE.completion,
    );
  });

  it('a mid-stream upstream error reaches the client as Anthropic sent it; credit settles on the usage so far', async () => {
    const head = [
      sse({
        type: 'message_start',
        message: {
          id: 'msg_01Err',
          type: 'message',
          role: 'assistant',
          model: 'claude-sonnet-4-5-20250929',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 40, cache_read_input_tokens: 100, cache_creation_input_tokens: 0, output_tokens: 1 },
        },
      }),
      sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'The weather in Oslo is' } }),
    ].join('');
    const error = sse({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    up.handler = (_r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(head);
      setTimeout(() => res.end(error), 30);
    };
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': key.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ ...rich, stream: true }),
    });
    expect(await res.text()).to.equal(head + error);

    // The SDK sees Anthropic's own error.
    up.handler = (_r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(head);
      setTimeout(() => res.end(error), 30);
    };
    const stream = client.messages.stream(rich as unknown as Anthropic.MessageCreateParams);
    const failed = await stream.finalMessage().then(
      () => null,
      (e: unknown) => e,
    );
    expect(String(failed)).to.match(/overloaded_error|Overloaded/);

    const g = await record();
    expect(g.status).to.equal('incomplete');
    const out = countTextTokens('The weather in Oslo is');
    expect(g).to.include({ promptTokens: 140, cachedTokens: 100, completionTokens: out });
    expect(g.cost).to.equal(40 * PRICE.prompt + 100 * PRICE.cache_read + out * PRICE.completion);
  });

  it('a fallback to a non-Anthropic deployment in the same request is translated', async () => {
    up.handler = (_r, res) =>
      sendJson(res, 529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    other.handler = (_r, res) => sendJson(res, 200, openaiFixtures.completion('Translated hello'));
    const m = await client.messages.create({
      model: 'team/claude-or-compat',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(m.id).to.match(/^msg_/);
    expect(m.content).to.deep.equal([{ type: 'text', text: 'Translated hello' }]);
    expect(last().json).to.deep.include({ model: 'claude-sonnet-4-5-20250929' });
    expect((other.requests[other.requests.length - 1].json as Json).model).to.equal('gpt-4o-mini');
  });

  it('an upstream error before the answer is Anthropic-shaped, with its status', async () => {
    up.handler = (_r, res: ServerResponse) =>
      sendJson(res, 400, { type: 'error', error: { type: 'invalid_request_error', message: 'messages: bad' } });
    const e = await client.messages
      .create({ model: 'team/claude', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
      .then(
        () => null,
        (err: unknown) => err as InstanceType<typeof Anthropic.APIError>,
      );
    expect(e?.status).to.equal(400);
    expect((e?.error as { type: string }).type).to.equal('error');
  });

  describe('count_tokens', () => {
    it("Anthropic's own count, through the transport: the body as sent, free, X-Gateway-Token-Count: provider", async () => {
      up.handler = (_r, res) => sendJson(res, 200, { input_tokens: 2095 });
      const before = await adminCall(gw, 'GET', `/v1/accounts/${key.accountId}`);
      const body = {
        model: 'team/claude',
        system: rich.system,
        tools: rich.tools,
        messages: rich.messages,
        thinking: rich.thinking,
      };
      const r = await client.messages.countTokens(body as unknown as Anthropic.MessageCountTokensParams);
      expect(r).to.deep.equal({ input_tokens: 2095 });
      expect(last().path).to.equal('/v1/messages/count_tokens');
      expect(last().json).to.deep.equal({ ...body, model: 'claude-sonnet-4-5-20250929' });
      const raw = await client.messages
        .countTokens({ model: 'team/claude', messages: [{ role: 'user', content: 'hi' }] })
        .withResponse();
      expect(raw.response.headers.get('x-gateway-token-count')).to.equal('provider');
      await settled(gw, key.accountId);
      const after = await adminCall(gw, 'GET', `/v1/accounts/${key.accountId}`);
      expect((after.body.data as Json).usage).to.equal((before.body.data as Json).usage);
    });

    it("the gateway's estimate when the model's first deployment is not Anthropic", async () => {
      const n = up.requests.length + other.requests.length;
      const raw = await client.messages
        .countTokens({ model: 'team/compat', messages: [{ role: 'user', content: 'hi there' }] })
        .withResponse();
      expect(raw.response.headers.get('x-gateway-token-count')).to.equal('estimate');
      expect(raw.data.input_tokens).to.be.a('number').above(0);
      expect(up.requests.length + other.requests.length).to.equal(n);
    });

    it("counts against the key's requests per minute (the limits plugin)", async () => {
      const k = await makeAccountKey(gw, { credits: 10 });
      await adminCall(gw, 'PUT', `/v1/keys/${k.hash}/limits`, { rate_limits: { rpm: 2 } });
      up.handler = (_r, res) => sendJson(res, 200, { input_tokens: 3 });
      const count = () =>
        fetch(`${gw.url}/v1/messages/count_tokens`, {
          method: 'POST',
          headers: { 'x-api-key': k.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'team/claude', messages: [{ role: 'user', content: 'x' }] }),
        });
      expect((await count()).status).to.equal(200);
      expect((await count()).status).to.equal(200);
      const third = await count();
      expect(third.status).to.equal(429);
      expect(((await third.json()) as { type: string }).type).to.equal('error');
    });
  });
});
