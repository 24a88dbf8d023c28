import { expect } from 'chai';
import OpenAI from 'openai';
import { type TestGateway } from '../helpers/gateway';
import { adminCall, makeAccountKey } from '../helpers/accounts';
import { fromNano } from '../../src/store/money';
import { CHAT_MODEL, SLOW_MODEL, startOperationsSdk } from './helpers';
import { sdkClient } from '../helpers/sdk';

type Usage = { input_tokens: number; output_tokens: number; total_tokens: number; cost: number };
const weather = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Weather for a city',
  strict: false,
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

describe('POST /v1/responses with the openai SDK', () => {
  let gw: TestGateway;
  let client: OpenAI;
  let key: string;
  before(async () => ({ gw, key, client } = await startOperationsSdk()));
  after(() => gw.stop());

  it('answers a plain request with a response object, usage and cost', async () => {
    const r = await client.responses.create({
      model: CHAT_MODEL,
      input: 'Hello there, gateway!',
      instructions: 'Be brief.',
    });
    expect(r.id).to.match(/^resp_/);
    expect(r.object).to.equal('response');
    expect(r.status).to.equal('completed');
    expect(r.output_text).to.equal('Mock answer: Hello there, gateway!');
    expect(r.output[0]).to.include({ type: 'message', role: 'assistant', status: 'completed' });
    expect(r.instructions).to.equal('Be brief.');
    const u = r.usage as unknown as Usage;
    expect(u.total_tokens).to.equal(u.input_tokens + u.output_tokens);
    expect(u.cost).to.equal(fromNano(u.input_tokens * 1000 + u.output_tokens * 2000));
    const g = await adminCall(gw, 'GET', `/v1/generation?id=${r.id}`, undefined, key);
    expect(g.status).to.equal(200);
    expect(g.body.data).to.deep.include({
      id: r.id,
      tokens_prompt: u.input_tokens,
      tokens_completion: u.output_tokens,
      total_cost: u.cost,
    });
  });

  it('streams the Responses events; the final text equals the plain answer', async () => {
    const input = 'stream me a fairly long answer with several words in it';
    const plain = await client.responses.create({ model: CHAT_MODEL, input });
    const stream = await client.responses.create({ model: CHAT_MODEL, input, stream: true });
    const types: string[] = [];
    const seqs: number[] = [];
    let text = '';
    let final: OpenAI.Responses.Response | undefined;
    for await (const ev of stream) {
      types.push(ev.type);
      seqs.push(ev.sequence_number);
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      if (ev.type === 'response.completed') final = ev.response;
    }
    expect(text).to.equal(plain.output_text);
    expect(types.slice(0, 4)).to.deep.equal([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
    ]);
    expect(types.slice(-4)).to.deep.equal([
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(types.filter((t) => t === 'response.output_text.delta').length).to.be.greaterThan(1);
    expect(seqs).to.deep.equal(seqs.map((_, i) => i));
    expect(final!.status).to.equal('completed');
    expect((final!.usage as unknown as Usage).cost).to.be.greaterThan(0);
    // The stored object is the one the stream ended with.
    const got = await client.responses.retrieve(final!.id);
    expect(got.output_text).to.equal(plain.output_text);
    expect(got.usage).to.deep.equal(final!.usage);
  });

  it('the SDK stream helper assembles the same final response', async () => {
    const s = client.responses.stream({ model: CHAT_MODEL, input: 'helper stream' });
    const r = await s.finalResponse();
    expect(r.output_text).to.equal('Mock answer: helper stream');
  });

  it('calls function tools and continues from a function_call_output, plain and streamed', async () => {
    const first = await client.responses.create({
      model: CHAT_MODEL,
      input: 'What does get_weather say for Paris?',
      tools: [weather],
    });
    const call = first.output.find((o) => o.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    expect(call).to.include({ type: 'function_call', name: 'get_weather', status: 'completed' });
    expect(JSON.parse(call.arguments)).to.deep.equal({ city: 'mock city' });
    const second = await client.responses.create({
      model: CHAT_MODEL,
      tools: [weather],
      input: [
        { role: 'user', content: 'What does get_weather say for Paris?' },
        call,
        { type: 'function_call_output', call_id: call.call_id, output: '{"temp": 21}' },
      ],
    });
    expect(second.output_text).to.equal('Mock answer: What does get_weather say for Paris?');

    const stream = await client.responses.create({
      model: CHAT_MODEL,
      input: 'call get_weather please',
      tools: [weather],
      stream: true,
    });
    let args = '';
    const types: string[] = [];
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'response.function_call_arguments.delta') args += ev.delta;
    }
    expect(JSON.parse(args)).to.deep.equal({ city: 'mock city' });
    expect(types).to.include.members([
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
  });

  it('continues a stored conversation with previous_response_id, for the same account only', async () => {
    const first = await client.responses.create({ model: CHAT_MODEL, input: 'My name is Ada.' });
    const second = await client.responses.create({
      model: CHAT_MODEL,
      input: 'What is my name?',
      previous_response_id: first.id,
    });
    expect(second.previous_response_id).to.equal(first.id);
    expect(second.output_text).to.equal('Mock answer: What is my name?');
    // The history went into the prompt: more input tokens than the same question alone.
    const alone = await client.responses.create({ model: CHAT_MODEL, input: 'What is my name?' });
    expect(second.usage!.input_tokens).to.be.greaterThan(alone.usage!.input_tokens);
    const items = await client.responses.inputItems.list(second.id);
    expect(items.data.map((i) => (i as { role?: string }).role)).to.deep.equal(['user', 'assistant', 'user']);

    const other = sdkClient(gw, (await makeAccountKey(gw)).key);
    const err = await other.responses
      .create({ model: CHAT_MODEL, input: 'hi', previous_response_id: first.id })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.NotFoundError>).code).to.equal('response_not_found');
  });

  it('answers a tool call on a stored response with only the function_call_output and previous_response_id', async () => {
    const first = await client.responses.create({
      model: CHAT_MODEL,
      input: 'Use get_weather for Oslo',
      tools: [weather],
    });
    const call = first.output.find((o) => o.type === 'function_call') as OpenAI.Responses.ResponseFunctionToolCall;
    const next = await client.responses.create({
      model: CHAT_MODEL,
      tools: [weather],
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"temp": 3}' }],
    });
    // The mock answers in text once the conversation ends with the tool's result.
    expect(next.output_text).to.equal('Mock answer: Use get_weather for Oslo');
    const items = await client.responses.inputItems.list(next.id);
    expect(items.data.map((i) => i.type)).to.deep.equal(['message', 'function_call', 'function_call_output']);
  });

  it('a stream the client leaves is stored as incomplete with what was sent', async () => {
    const words = Array.from({ length: 60 }, (_, i) => `w${i}`).join(' ');
    const stream = await client.responses.create({ model: SLOW_MODEL, input: words, stream: true });
    let id = '';
    let text = '';
    for await (const ev of stream) {
      if (ev.type === 'response.created') id = ev.response.id;
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      if (text.length > 10) break; // the SDK aborts the request
    }
    let got: OpenAI.Responses.Response | undefined;
    for (let i = 0; i < 100 && !got; i++) {
      got = await client.responses.retrieve(id).catch(() => undefined);
      if (!got) await new Promise((r) => setTimeout(r, 20));
    }
    expect(got!.status).to.equal('incomplete');
    expect(got!.incomplete_details).to.deep.equal({ reason: 'client_disconnected' });
    expect(got!.output_text.startsWith(text)).to.equal(true);
    expect(got!.output_text.length).to.be.lessThan(words.length);
  });

  it('store: false keeps nothing', async () => {
    const r = await client.responses.create({ model: CHAT_MODEL, input: 'forget me', store: false });
    expect((r as unknown as { store: boolean }).store).to.equal(false);
    const err = await client.responses.retrieve(r.id).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.NotFoundError);
    const cont = await client.responses
      .create({ model: CHAT_MODEL, input: 'x', previous_response_id: r.id })
      .catch((e: unknown) => e);
    expect(cont).to.be.instanceOf(OpenAI.NotFoundError);
  });

  it('GET and DELETE return what was created here, on /v1/responses/{id} and /responses/{id}', async () => {
    const r = await client.responses.create({ model: CHAT_MODEL, input: 'keep me', metadata: { ticket: '42' } });
    const got = await client.responses.retrieve(r.id);
    expect(got).to.deep.equal(r);
    const raw = await fetch(`${gw.url}/responses/${r.id}`, { headers: { authorization: `Bearer ${key}` } });
    expect(raw.status).to.equal(200);
    const body = (await raw.json()) as Record<string, unknown>;
    const { output_text: _sdkConvenience, ...wire } = r; // the SDK adds output_text; the wire object has none
    expect(body).to.deep.equal(JSON.parse(JSON.stringify(wire)) as unknown);
    expect(body).to.not.have.property('input_items');
    await client.responses.delete(r.id);
    expect(await client.responses.retrieve(r.id).catch((e: unknown) => e)).to.be.instanceOf(OpenAI.NotFoundError);
    const gone = await fetch(`${gw.url}/responses/${r.id}`, { headers: { authorization: `Bearer ${key}` } });
    expect(gone.status).to.equal(404);
    expect(gone.headers.get('content-type')).to.match(/application\/problem\+json/);
  });
});
