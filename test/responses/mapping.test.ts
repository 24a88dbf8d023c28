import { expect } from 'chai';
import OpenAI from 'openai';
import { startTestGateway, postJson, type TestGateway } from '../helpers/gateway';
import { makeAccountKey } from '../helpers/accounts';
import { MockUpstream, openaiFixtures, sendJson, writeSse } from '../helpers/mock-upstream';
import { operationsConfig } from './helpers';
import { keyedClient } from '../helpers/sdk';

/** A gateway whose model `up/m` is an OpenAI-compatible loopback upstream, to see what the mapping sends. */
describe('/v1/responses mapped onto an OpenAI-compatible upstream', () => {
  let up: MockUpstream;
  let gw: TestGateway;
  let client: OpenAI;
  let key: string;
  before(async () => {
    up = await new MockUpstream().start();
    gw = await startTestGateway(
      operationsConfig({
        providers: [{ name: 'up', type: 'openai', api_base: `${up.url}/v1` }],
        models: [
          {
            id: 'up/m',
            pricing: { prompt: 0.000001, completion: 0.000002 },
            context_length: 8000,
            deployments: [{ provider: 'up', model: 'gpt-up' }],
          },
        ],
      }),
    );
    ({ key, client } = await keyedClient(gw, { credits: 5 }));
  });
  after(async () => {
    await gw.stop();
    await up.stop();
  });

  it('text.format json_schema, instructions, max_output_tokens and reasoning.effort reach the upstream as chat fields', async () => {
    const answer = JSON.stringify({ city: 'Paris', temp: 21 });
    up.enqueue((_req, res) => sendJson(res, 200, openaiFixtures.completion(answer)));
    const schema = {
      type: 'object',
      properties: { city: { type: 'string' }, temp: { type: 'number' } },
      required: ['city', 'temp'],
      additionalProperties: false,
    };
    const r = await client.responses.create({
      model: 'up/m',
      instructions: 'Answer in JSON.',
      input: [{ role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris?' }] }],
      text: { format: { type: 'json_schema', name: 'weather', schema, strict: true } },
      max_output_tokens: 50,
      reasoning: { effort: 'low' },
    });
    expect(JSON.parse(r.output_text)).to.deep.equal({ city: 'Paris', temp: 21 });
    const sent = up.requests[up.requests.length - 1].json as Record<string, unknown>;
    expect(sent.model).to.equal('gpt-up');
    expect(sent.messages).to.deep.equal([
      { role: 'system', content: 'Answer in JSON.' },
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
    ]);
    expect(sent.response_format).to.deep.equal({
      type: 'json_schema',
      json_schema: { name: 'weather', schema, strict: true },
    });
    expect(sent.max_tokens).to.equal(50);
    expect(sent.reasoning_effort).to.equal('low');
    expect(r.usage).to.include({ input_tokens: 19, output_tokens: 10, total_tokens: 29 });
  });

  it("an upstream's reasoning_content becomes a reasoning item, plain and streamed", async () => {
    up.enqueue((_req, res) =>
      sendJson(res, 200, {
        ...openaiFixtures.completion('42'),
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: '42', reasoning_content: 'Six times seven.' },
            finish_reason: 'stop',
          },
        ],
      }),
    );
    const r = await client.responses.create({ model: 'up/m', input: 'answer?' });
    expect(r.output.map((o) => o.type)).to.deep.equal(['reasoning', 'message']);
    expect((r.output[0] as unknown as { content: Array<{ text: string }> }).content[0].text).to.equal(
      'Six times seven.',
    );
    up.enqueue((_req, res) =>
      writeSse(res, [
        openaiFixtures.chunk({ role: 'assistant', reasoning_content: 'Six ' }),
        openaiFixtures.chunk({ reasoning_content: 'times seven.' }),
        openaiFixtures.chunk({ content: '4' }),
        openaiFixtures.chunk({ content: '2' }),
        openaiFixtures.chunk({}, 'stop'),
        openaiFixtures.usageChunk(5, 4),
      ]),
    );
    const s = client.responses.stream({ model: 'up/m', input: 'answer?' });
    const types: string[] = [];
    s.on('event', (ev) => types.push(ev.type));
    const final = await s.finalResponse();
    expect(final.output_text).to.equal('42');
    expect((final.output[0] as unknown as { content: Array<{ text: string }> }).content[0].text).to.equal(
      'Six times seven.',
    );
    expect(types).to.include.members(['response.reasoning_text.delta', 'response.reasoning_text.done']);
    expect(types.indexOf('response.reasoning_text.done')).to.be.lessThan(types.indexOf('response.output_text.delta'));
  });

  it('a finish at the token limit is an incomplete response', async () => {
    up.enqueue((_req, res) =>
      sendJson(res, 200, {
        ...openaiFixtures.completion('cut'),
        choices: [{ index: 0, message: { role: 'assistant', content: 'cut' }, finish_reason: 'length' }],
      }),
    );
    const r = await client.responses.create({ model: 'up/m', input: 'long', max_output_tokens: 1 });
    expect(r.status).to.equal('incomplete');
    expect(r.incomplete_details).to.deep.equal({ reason: 'max_output_tokens' });
  });

  it('a stream that breaks after it started ends with response.failed and the error event', async () => {
    up.enqueue((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(openaiFixtures.chunk({ role: 'assistant', content: 'Hel' }))}\n\n`);
      setTimeout(() => res.destroy(), 30);
    });
    const stream = await client.responses.create({ model: 'up/m', input: 'break', stream: true });
    const events: Array<{ type: string; [k: string]: unknown }> = [];
    for await (const ev of stream) events.push(ev as unknown as { type: string });
    const failed = events.find((e) => e.type === 'response.failed') as unknown as {
      response: OpenAI.Responses.Response;
    };
    expect(failed.response.status).to.equal('failed');
    expect(failed.response.error?.code).to.equal('stream_interrupted');
    const last = events[events.length - 1];
    expect(last).to.include({ type: 'error', code: 'stream_interrupted' });
    expect(last.message).to.be.a('string');
  });

  it('errors before the answer are the OpenAI error object; the upstream is not called', async () => {
    const before = up.requests.length;
    const bad = await postJson(
      `${gw.url}/v1/responses`,
      { model: 'up/m', input: 'x', background: true },
      { authorization: `Bearer ${key}` },
    );
    expect(bad.status).to.equal(400);
    expect(await bad.json()).to.deep.equal({
      error: {
        message:
          'background responses are not supported: the gateway answers while the request is open and keeps no ' +
          'queue to poll',
        type: 'invalid_request_error',
        param: 'background',
        code: 'unsupported_parameter',
      },
    });
    const range = await client.responses.create({ model: 'up/m', input: 'x', temperature: 3 }).catch((e: unknown) => e);
    expect(range).to.be.instanceOf(OpenAI.BadRequestError);
    expect((range as InstanceType<typeof OpenAI.BadRequestError>).param).to.equal('temperature');
    const tooLong = await client.responses
      .create({ model: 'up/m', input: 'x', max_output_tokens: 9000 })
      .catch((e: unknown) => e);
    expect((tooLong as InstanceType<typeof OpenAI.BadRequestError>).param).to.equal('max_output_tokens');
    expect((tooLong as Error).message)
      .to.include('max_output_tokens must be at most')
      .and.not.include('max_tokens');
    const unknown = await client.responses.create({ model: 'nope/m', input: 'x' }).catch((e: unknown) => e);
    expect(unknown).to.be.instanceOf(OpenAI.NotFoundError);
    const noKey = await postJson(`${gw.url}/v1/responses`, { model: 'up/m', input: 'x' });
    expect(noKey.status).to.equal(401);
    expect(((await noKey.json()) as { error: { type: string } }).error.type).to.equal('authentication_error');
    expect(up.requests.length).to.equal(before);
  });

  it('402 before anything is sent upstream when credit cannot cover the request', async () => {
    const poor = new OpenAI({
      baseURL: `${gw.url}/v1`,
      apiKey: (await makeAccountKey(gw, { credits: 0.000001 })).key,
      maxRetries: 0,
    });
    const before = up.requests.length;
    const err = await poor.responses.create({ model: 'up/m', input: 'expensive question' }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.APIError);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).to.equal(402);
    expect((err as InstanceType<typeof OpenAI.APIError>).code).to.equal('insufficient_account_credits');
    const streamed = await poor.responses
      .create({ model: 'up/m', input: 'expensive', stream: true })
      .catch((e: unknown) => e);
    expect((streamed as InstanceType<typeof OpenAI.APIError>).status).to.equal(402);
    expect(up.requests.length).to.equal(before);
  });

  it('streams an upstream tool call as function_call events', async () => {
    up.enqueue((_req, res) =>
      writeSse(res, [
        openaiFixtures.chunk({
          role: 'assistant',
          content: null,
          tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }],
        }),
        openaiFixtures.chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
        openaiFixtures.chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
        openaiFixtures.chunk({}, 'tool_calls'),
        openaiFixtures.usageChunk(12, 7),
      ]),
    );
    const s = client.responses.stream({
      model: 'up/m',
      input: 'weather?',
      tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object' }, strict: false }],
    });
    const r = await s.finalResponse();
    expect(r.output).to.have.length(1);
    expect(r.output[0]).to.include({
      type: 'function_call',
      call_id: 'call_1',
      name: 'get_weather',
      arguments: '{"city":"Paris"}',
      status: 'completed',
    });
    expect(r.usage).to.include({ input_tokens: 12, output_tokens: 7 });
  });
});
