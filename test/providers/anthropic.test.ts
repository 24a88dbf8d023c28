import { expect } from 'chai';
import OpenAI from 'openai';
import { sendJson, writeSse } from '../helpers/mock-upstream';
import {
  weatherTool,
  lastRequest,
  lastSent,
  streamChat,
  streamFrames,
  useProviderRig,
} from '../helpers/provider-gateway';
import {
  anthropicEvent as ev,
  anthropicMessage,
  messageEnd,
  messageStart,
  toolUseBlock,
} from '../helpers/anthropic-sse';

// Shapes from the Anthropic Messages API reference and its streaming guide.
const message = (content: unknown[], stopReason = 'end_turn') =>
  anthropicMessage(
    content,
    { input_tokens: 12, output_tokens: 6, cache_read_input_tokens: 4, cache_creation_input_tokens: 0 },
    { stopReason, id: 'msg_01XFDUDYJgAACzvnptvVoYEL' },
  );
const start = messageStart({ input_tokens: 25 });

describe('provider: anthropic', () => {
  const rig = useProviderRig('anthropic');

  it('translates the request: system, merged turns, images, tool calls and results, tools, tool_choice, stop, auth headers', async () => {
    rig.up.enqueue((_r, res) => sendJson(res, 200, message([{ type: 'text', text: 'Sunny.' }])));
    await rig.client.chat.completions.create({
      model: 'p/m',
      max_tokens: 100,
      temperature: 1.5,
      stop: 'END',
      user: 'u1',
      parallel_tool_calls: false,
      tools: [weatherTool],
      tool_choice: 'required',
      messages: [
        { role: 'system', content: 'Be brief.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look:' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
        { role: 'user', content: 'and the weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: '18C' },
      ],
    });
    const r = lastRequest(rig);
    expect(r.path).to.equal('/v1/messages');
    expect(r.headers['x-api-key']).to.equal('sk-provider-key');
    expect(r.headers['anthropic-version']).to.equal('2023-06-01');
    expect(r.json).to.deep.equal({
      model: 'native-model',
      max_tokens: 100,
      system: 'Be brief.',
      temperature: 1,
      stop_sequences: ['END'],
      metadata: { user_id: 'u1' },
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Look:' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'text', text: 'and the weather in Paris?' },
          ],
        },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } }],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '18C' }] },
      ],
      tools: [
        { name: 'get_weather', description: 'Weather for a city', input_schema: weatherTool.function.parameters },
      ],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
    });
  });

  it('parses a plain answer: content, finish_reason, usage with cached tokens', async () => {
    rig.up.enqueue((_r, res) => sendJson(res, 200, message([{ type: 'text', text: 'Hello!' }], 'max_tokens')));
    const c = await rig.client.chat.completions.create({ model: 'p/m', messages: [{ role: 'user', content: 'hi' }] });
    expect(c.choices[0].message.content).to.equal('Hello!');
    expect(c.choices[0].finish_reason).to.equal('length');
    expect(c.model).to.equal('p/m');
    expect(c.usage).to.deep.include({ prompt_tokens: 16, completion_tokens: 6, total_tokens: 22 });
    expect(c.usage?.prompt_tokens_details?.cached_tokens).to.equal(4);
  });

  it('parses parallel tool calls with their ids', async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(
        res,
        200,
        message(
          [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: 'toolu_a', name: 'get_weather', input: { city: 'Paris' } },
            { type: 'tool_use', id: 'toolu_b', name: 'get_weather', input: { city: 'Rome' } },
          ],
          'tool_use',
        ),
      ),
    );
    const c = await rig.client.chat.completions.create({
      model: 'p/m',
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'weather?' }],
    });
    expect(c.choices[0].finish_reason).to.equal('tool_calls');
    expect(c.choices[0].message.tool_calls).to.deep.equal([
      { id: 'toolu_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      { id: 'toolu_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
    ]);
  });

  it('streams text, then two tool calls whose streamed arguments keep separate indexes, one finish, usage', async () => {
    rig.up.enqueue((_r, res) =>
      writeSse(
        res,
        [
          start,
          ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
          ev('ping', {}),
          ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Let me ' } }),
          ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'check.' } }),
          ev('content_block_stop', { index: 0 }),
          ...toolUseBlock(1, 'toolu_a', 'get_weather', '{"city": ', '"Paris"}'),
          ...toolUseBlock(2, 'toolu_b', 'get_weather', '{"city": "Rome"}'),
          ...messageEnd('tool_use', 89),
        ],
        { named: true },
      ),
    );
    const s = await streamChat(rig, { tools: [weatherTool], messages: [{ role: 'user', content: 'weather?' }] });
    expect(s.role).to.equal('assistant');
    expect(s.text).to.equal('Let me check.');
    expect(s.calls).to.deep.equal([
      { id: 'toolu_a', name: 'get_weather', args: '{"city": "Paris"}' },
      { id: 'toolu_b', name: 'get_weather', args: '{"city": "Rome"}' },
    ]);
    expect(s.finishes).to.deep.equal(['tool_calls']);
    expect(s.usage).to.deep.include({ prompt_tokens: 25, completion_tokens: 89, total_tokens: 114 });
  });

  it('a mid-stream error event ends the stream with one error event', async () => {
    rig.up.enqueue((_r, res) =>
      writeSse(
        res,
        [
          start,
          ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hi' } }),
          ev('error', { error: { type: 'overloaded_error', message: 'Overloaded' } }),
        ],
        { named: true },
      ),
    );
    const frames = await streamFrames(rig);
    expect(frames).to.not.include('[DONE]');
    const last = JSON.parse(frames[frames.length - 1]) as { error: { message: string; type: string } };
    expect(last.error.type).to.equal('upstream_error');
    expect(last.error.message).to.include('Overloaded');
  });

  it('maps error statuses: 429 rate limit, 529 overloaded (retryable 5xx), 400 prompt too long as context_length_exceeded', async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(res, 429, {
        type: 'error',
        error: {
          type: 'rate_limit_error',
          message: 'Number of request tokens has exceeded your per-minute rate limit',
        },
      }),
    );
    const e1 = await rig.client.chat.completions
      .create({ model: 'p/m', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(e1).to.be.instanceOf(OpenAI.RateLimitError);
    rig.up.enqueue((_r, res) =>
      sendJson(res, 529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
    );
    const e2 = (await rig.client.chat.completions
      .create({ model: 'p/m', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(e2.status).to.equal(502);
    rig.up.enqueue((_r, res) =>
      sendJson(res, 400, {
        type: 'error',
        error: { type: 'invalid_request_error', message: 'prompt is too long: 250000 tokens > 200000 maximum' },
      }),
    );
    const e3 = (await rig.client.chat.completions
      .create({ model: 'p/m', messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e)) as InstanceType<typeof OpenAI.APIError>;
    expect(e3.status).to.equal(400);
    expect(e3.code).to.equal('context_length_exceeded');
  });

  it('json_schema answers through a forced tool whose input becomes the content', async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(
        res,
        200,
        message([{ type: 'tool_use', id: 'toolu_j', name: 'json_output', input: { answer: 42 } }], 'tool_use'),
      ),
    );
    const c = await rig.client.chat.completions.create({
      model: 'p/m',
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'a', schema: { type: 'object', properties: { answer: { type: 'number' } } } },
      },
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(JSON.parse(c.choices[0].message.content ?? '')).to.deep.equal({ answer: 42 });
    expect(c.choices[0].finish_reason).to.equal('stop');
    expect((lastSent(rig) as { tool_choice: unknown }).tool_choice).to.deep.equal({
      type: 'tool',
      name: 'json_output',
    });
  });
});
