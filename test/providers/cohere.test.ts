import { expect } from 'chai';
import { sendJson, writeSse } from '../helpers/mock-upstream';
import { weatherTool, lastSent, postChat, streamChat, streamFrames, useProviderRig } from '../helpers/provider-gateway';

// Cohere v2 chat (docs.cohere.com/reference/chat, /v2/docs/streaming): named SSE events, message-end with finish_reason and usage.
const ev = (type: string, data: Record<string, unknown> = {}) => ({ event: type, data: { type, ...data } });
const start = ev('message-start', {
  id: 'fba98ad3-e5a1-413c-a8de-84fbf9baabf7',
  delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } },
});
const text = (t: string) => ev('content-delta', { index: 0, delta: { message: { content: { text: t } } } });
const end = (finish: string, extra: Record<string, unknown> = {}) =>
  ev('message-end', {
    delta: {
      finish_reason: finish,
      usage: { billed_units: { input_tokens: 8, output_tokens: 4 }, tokens: { input_tokens: 70, output_tokens: 4 } },
      ...extra,
    },
  });
const timeTool = {
  type: 'function' as const,
  function: { name: 'get_time', parameters: { type: 'object', properties: {} } },
};

describe('provider: cohere (conformance)', () => {
  const rig = useProviderRig('cohere');

  it('sends tool history in v2 shape (assistant tool_calls without empty content, tool_call_id), images as parts, a forced tool as REQUIRED with only that tool', async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(res, 200, {
        id: 'c1',
        finish_reason: 'COMPLETE',
        message: { role: 'assistant', content: [{ type: 'text', text: 'It is sunny.' }] },
        usage: { billed_units: { input_tokens: 20, output_tokens: 4 }, tokens: { input_tokens: 90, output_tokens: 4 } },
      }),
    );
    const c = await rig.client.chat.completions.create({
      model: 'p/m',
      tools: [weatherTool, timeTool],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'weather here?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'get_weather_s8qdenha4x2z',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Toronto"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'get_weather_s8qdenha4x2z', content: '{"temperature":"20C"}' },
      ],
    });
    expect(c.choices[0].message.content).to.equal('It is sunny.');
    expect(c.usage).to.deep.include({ prompt_tokens: 20, completion_tokens: 4, total_tokens: 24 });
    const b = lastSent(rig);
    expect(b.tool_choice).to.equal('REQUIRED');
    expect(b.tools).to.deep.equal([weatherTool]);
    expect(b.messages).to.deep.equal([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'weather here?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
        ],
      },
      {
        role: 'assistant',
        tool_calls: [
          {
            id: 'get_weather_s8qdenha4x2z',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Toronto"}' },
          },
        ],
      },
      { role: 'tool', content: '{"temperature":"20C"}', tool_call_id: 'get_weather_s8qdenha4x2z' },
    ]);
  });

  it('parallel tool calls in a plain answer; MAX_TOKENS in a stream maps to length with usage', async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(res, 200, {
        id: 'c2',
        finish_reason: 'TOOL_CALL',
        message: {
          role: 'assistant',
          tool_plan: 'I will check both cities.',
          tool_calls: [
            {
              id: 'get_weather_1',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Toronto"}' },
            },
            {
              id: 'get_weather_2',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Madrid"}' },
            },
          ],
        },
        usage: {
          billed_units: { input_tokens: 30, output_tokens: 20 },
          tokens: { input_tokens: 1000, output_tokens: 60 },
        },
      }),
    );
    const t = await rig.client.chat.completions.create({
      model: 'p/m',
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'Toronto and Madrid?' }],
    });
    expect(t.choices[0].finish_reason).to.equal('tool_calls');
    expect(t.choices[0].message.tool_calls?.map((x) => x.id)).to.deep.equal(['get_weather_1', 'get_weather_2']);
    rig.up.enqueue((_r, res) =>
      writeSse(
        res,
        [
          start,
          ev('content-start', { index: 0, delta: { message: { content: { type: 'text', text: '' } } } }),
          text('A'),
          text(' large'),
          ev('content-end', { index: 0 }),
          end('MAX_TOKENS'),
        ],
        { named: true },
      ),
    );
    const s = await streamChat(rig, { max_tokens: 2 });
    expect(s.role).to.equal('assistant');
    expect(s.text).to.equal('A large');
    expect(s.finishes).to.deep.equal(['length']);
    expect(s.usage).to.deep.include({ prompt_tokens: 8, completion_tokens: 4 });
    expect(lastSent(rig)).to.deep.include({ stream: true, max_tokens: 2 });
  });

  it('JSON schema mode becomes response_format json_object with json_schema', async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(res, 200, {
        id: 'c3',
        finish_reason: 'COMPLETE',
        message: { role: 'assistant', content: [{ type: 'text', text: '{"city":"Paris"}' }] },
        usage: { tokens: { input_tokens: 5, output_tokens: 6 } },
      }),
    );
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const c = await rig.client.chat.completions.create({
      model: 'p/m',
      response_format: { type: 'json_schema', json_schema: { name: 'city', schema } },
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(c.choices[0].message.content).to.equal('{"city":"Paris"}');
    expect(lastSent(rig)).to.deep.include({
      response_format: { type: 'json_object', json_schema: schema },
    });
  });

  it('a message-end with finish_reason ERROR mid-stream becomes an error event, not a finish', async () => {
    rig.up.enqueue((_r, res) =>
      writeSse(res, [start, text('Half'), end('ERROR', { error: 'internal generation error' })], { named: true }),
    );
    const f = await streamFrames(rig);
    const last = JSON.parse(f[f.length - 1]) as {
      error?: { message: string };
      choices?: Array<{ finish_reason: string | null }>;
    };
    expect(last.error?.message).to.include('internal generation error');
    expect(
      f
        .slice(0, -1)
        .some(
          (x) =>
            x !== '[DONE]' &&
            (JSON.parse(x) as { choices?: Array<{ finish_reason: string | null }> }).choices?.some(
              (c) => c.finish_reason,
            ),
        ),
    ).to.equal(false);
  });

  it('error status: 401 -> 502 without upstream text, 500 stays 5xx, 422 -> 400', async () => {
    rig.up.enqueue((_r, res) => sendJson(res, 401, { id: 'e1', message: 'invalid api token' }));
    let res = await postChat(rig);
    expect(res.status).to.equal(502);
    expect(await res.text()).to.not.include('invalid api token');
    rig.up.enqueue((_r, r) =>
      sendJson(r, 500, { id: 'e2', message: 'internal server error, this has been reported to our developers' }),
    );
    res = await postChat(rig);
    expect(res.status).to.be.within(500, 599);
    rig.up.enqueue((_r, r) => sendJson(r, 422, { id: 'e3', message: 'No valid tool call or response generated' }));
    res = await postChat(rig);
    expect(res.status).to.equal(400);
  });
});
