import { expect } from 'chai';
import OpenAI from 'openai';
import { type TestGateway } from '../helpers/gateway';
import { startSdkGateway } from '../helpers/sdk';

const MODEL = 'mock/gpt-4o-mini';
const weather = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather in a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, days: { type: 'integer' } },
      required: ['city', 'days'],
    },
  },
};
const time = {
  type: 'function' as const,
  function: {
    name: 'get_time',
    parameters: { type: 'object', properties: { zone: { type: 'string', enum: ['UTC', 'CET'] } }, required: ['zone'] },
  },
};

describe('the built-in mock provider', () => {
  let gw: TestGateway;
  let client: OpenAI;
  before(async () => ({ gw, client } = await startSdkGateway()));
  after(() => gw.stop());

  it('is deterministic: the same prompt gives the same answer and usage', async () => {
    const ask = () =>
      client.chat.completions.create({
        model: MODEL,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'What is 2+2?' },
        ],
      });
    const [a, b] = [await ask(), await ask()];
    expect(a.choices[0].message.content).to.equal(b.choices[0].message.content);
    expect(a.usage).to.deep.equal(b.usage);
    expect(a.id).to.not.equal(b.id);
  });

  it('cuts at max_tokens with finish_reason length, counting completion tokens exactly', async () => {
    const c = await client.chat.completions.create({
      model: MODEL,
      max_tokens: 3,
      messages: [{ role: 'user', content: 'one two three four five' }],
    });
    expect(c.choices[0].finish_reason).to.equal('length');
    expect(c.choices[0].message.content).to.equal('Mock answer:');
    expect(c.usage?.completion_tokens).to.equal(3);
  });

  it('answers n choices, usage counting all of them', async () => {
    const c = await client.chat.completions.create({ model: MODEL, n: 2, messages: [{ role: 'user', content: 'hi' }] });
    expect(c.choices.map((x) => x.index)).to.deep.equal([0, 1]);
    expect(c.usage?.completion_tokens).to.equal(2 * 4); // "Mock answer: hi" is 4 tokens, twice
  });

  it('calls every tool the user names (parallel), with arguments that fit the schema', async () => {
    const c = await client.chat.completions.create({
      model: MODEL,
      tools: [weather, time],
      messages: [{ role: 'user', content: 'use get_weather and get_time please' }],
    });
    expect(c.choices[0].finish_reason).to.equal('tool_calls');
    const calls = c.choices[0].message.tool_calls ?? [];
    expect(calls.map((t) => t.type === 'function' && t.function.name)).to.deep.equal(['get_weather', 'get_time']);
    const first = calls[0];
    expect(first.type === 'function' && JSON.parse(first.function.arguments)).to.deep.equal({
      city: 'mock city',
      days: 1,
    });
    expect(new Set(calls.map((t) => t.id)).size).to.equal(2);
  });

  it('honours parallel_tool_calls false, tool_choice required/forced/none', async () => {
    const one = await client.chat.completions.create({
      model: MODEL,
      tools: [weather, time],
      parallel_tool_calls: false,
      messages: [{ role: 'user', content: 'get_weather get_time' }],
    });
    expect(one.choices[0].message.tool_calls).to.have.length(1);
    const forced = await client.chat.completions.create({
      model: MODEL,
      tools: [weather, time],
      tool_choice: { type: 'function', function: { name: 'get_time' } },
      messages: [{ role: 'user', content: 'hi' }],
    });
    const f = forced.choices[0].message.tool_calls?.[0];
    expect(f?.type === 'function' && f.function.name).to.equal('get_time');
    const req = await client.chat.completions.create({
      model: MODEL,
      tools: [weather],
      tool_choice: 'required',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(req.choices[0].message.tool_calls).to.have.length(1);
    const none = await client.chat.completions.create({
      model: MODEL,
      tools: [weather],
      tool_choice: 'none',
      messages: [{ role: 'user', content: 'get_weather' }],
    });
    expect(none.choices[0].message.tool_calls).to.equal(undefined);
    expect(none.choices[0].finish_reason).to.equal('stop');
  });

  it('streams tool calls with a stable index, id and name on the first delta, argument fragments after', async () => {
    const stream = await client.chat.completions.create({
      model: MODEL,
      stream: true,
      stream_options: { include_usage: true },
      tools: [weather, time],
      messages: [{ role: 'user', content: 'get_weather and get_time' }],
    });
    const calls: Array<{ id?: string; name?: string; args: string }> = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      for (const d of chunk.choices[0]?.delta.tool_calls ?? []) {
        if (!calls[d.index]) {
          expect(d.id, 'id on the first delta').to.be.a('string');
          expect(d.function?.name, 'name on the first delta').to.be.a('string');
          calls[d.index] = { id: d.id, name: d.function?.name, args: '' };
        } else expect(d.id).to.equal(undefined);
        calls[d.index].args += d.function?.arguments ?? '';
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(finish).to.equal('tool_calls');
    expect(calls.map((c) => c.name)).to.deep.equal(['get_weather', 'get_time']);
    expect(JSON.parse(calls[1].args)).to.deep.equal({ zone: 'UTC' });
  });

  it('answers in text once the conversation holds the tool result', async () => {
    const c = await client.chat.completions.create({
      model: MODEL,
      tools: [weather],
      messages: [
        { role: 'user', content: 'get_weather in Paris' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris","days":1}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      ],
    });
    expect(c.choices[0].finish_reason).to.equal('stop');
    expect(c.choices[0].message.content).to.equal('Mock answer: get_weather in Paris');
  });
});
