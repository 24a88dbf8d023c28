import { expect } from 'chai';
import { sendJson, writeSse } from '../helpers/mock-upstream';
import {
  weatherTool,
  streamWithWeatherTool,
  lastFrameError,
  lastSent,
  postChat,
  streamFrames,
  useProviderRig,
} from '../helpers/provider-gateway';
import { mistralToolId } from '../../src/providers/mistral';

import { mistralAnswer, mistralChunk } from '../helpers/mistral-fixtures';

// Mistral (docs.mistral.ai API reference): 9-character tool-call ids, usage on the last chunk.

describe('provider: mistral (conformance)', () => {
  const rig = useProviderRig('mistral');

  it('plain answer: text, usage; parallel tool calls keep Mistral ids', async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(
        res,
        200,
        mistralAnswer({ role: 'assistant', content: 'Bonjour !', tool_calls: null, prefix: false }, 'stop'),
      ),
    );
    const c = await rig.client.chat.completions.create({
      model: 'p/m',
      messages: [{ role: 'user', content: 'salut' }],
    });
    expect(c.choices[0].message.content).to.equal('Bonjour !');
    expect(c.usage).to.deep.include({ prompt_tokens: 16, completion_tokens: 34, total_tokens: 50 });
    rig.up.enqueue((_r, res) =>
      sendJson(
        res,
        200,
        mistralAnswer(
          {
            role: 'assistant',
            content: '',
            tool_calls: [
              { id: 'D681PevKs', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } },
              { id: 'aK92LmQz1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Rome"}' } },
            ],
          },
          'tool_calls',
        ),
      ),
    );
    const t = await rig.client.chat.completions.create({
      model: 'p/m',
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'weather' }],
    });
    expect(t.choices[0].finish_reason).to.equal('tool_calls');
    expect(t.choices[0].message.tool_calls?.map((x) => x.id)).to.deep.equal(['D681PevKs', 'aK92LmQz1']);
  });

  it('maps foreign tool-call ids to 9-character ones, the same on the call and on its result', async () => {
    rig.up.enqueue((_r, res) => sendJson(res, 200, mistralAnswer({ role: 'assistant', content: 'Sunny.' }, 'stop')));
    await rig.client.chat.completions.create({
      model: 'p/m',
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'weather' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_Xy-12_from_openai',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
            },
            { id: 'D681PevKs', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_Xy-12_from_openai', content: 'sunny' },
        { role: 'tool', tool_call_id: 'D681PevKs', content: 'rain' },
      ],
    });
    const msgs = (
      lastSent(rig) as {
        messages: Array<{ tool_calls?: Array<{ id: string }>; tool_call_id?: string }>;
      }
    ).messages;
    const mapped = mistralToolId('call_Xy-12_from_openai');
    expect(mapped).to.match(/^[a-zA-Z0-9]{9}$/);
    expect(msgs[1].tool_calls?.map((t) => t.id)).to.deep.equal([mapped, 'D681PevKs']);
    expect([msgs[2].tool_call_id, msgs[3].tool_call_id]).to.deep.equal([mapped, 'D681PevKs']);
  });

  it('streams text and tool-call argument fragments; a usage chunk comes even when the client did not ask (dropped by the writer)', async () => {
    rig.up.enqueue((_r, res) =>
      writeSse(res, [
        mistralChunk({ role: 'assistant', content: '' }),
        mistralChunk({ content: 'Let me check.' }),
        mistralChunk({
          tool_calls: [
            { index: 0, id: 'D681PevKs', type: 'function', function: { name: 'get_weather', arguments: '{"city": ' } },
          ],
        }),
        mistralChunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
        mistralChunk({ content: '' }, 'tool_calls', { prompt_tokens: 9, total_tokens: 21, completion_tokens: 12 }),
      ]),
    );
    const s = await streamWithWeatherTool(rig);
    expect(s.text).to.equal('Let me check.');
    expect(s.calls).to.deep.equal([{ id: 'D681PevKs', name: 'get_weather', args: '{"city": "Paris"}' }]);
    expect(s.finishes).to.deep.equal(['tool_calls']);
    expect(s.usage).to.deep.include({ prompt_tokens: 9, completion_tokens: 12, total_tokens: 21 });
    rig.up.enqueue((_r, res) =>
      writeSse(res, [
        mistralChunk({ role: 'assistant', content: 'hi' }),
        mistralChunk({}, 'stop', { prompt_tokens: 1, total_tokens: 2, completion_tokens: 1 }),
      ]),
    );
    const frames = await streamFrames(rig);
    expect(frames[frames.length - 1]).to.equal('[DONE]');
    expect(frames.some((f) => f !== '[DONE]' && (JSON.parse(f) as { usage?: unknown }).usage)).to.equal(false);
  });

  it('a stream cut before its finish chunk ends in stream_interrupted', async () => {
    rig.up.enqueue((_r, res) =>
      writeSse(res, [mistralChunk({ role: 'assistant', content: 'Bon' }), mistralChunk({ content: 'jour' })], {
        done: false,
      }),
    );
    const f = await streamFrames(rig);
    expect(lastFrameError(f).code).to.equal('stream_interrupted');
  });

  it('JSON schema mode goes to Mistral in its (OpenAI) shape', async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(res, 200, mistralAnswer({ role: 'assistant', content: '{"city":"Paris"}' }, 'stop')),
    );
    const rf = {
      type: 'json_schema' as const,
      json_schema: {
        name: 'city',
        schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        strict: true,
      },
    };
    const c = await rig.client.chat.completions.create({
      model: 'p/m',
      response_format: rf,
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(c.choices[0].message.content).to.equal('{"city":"Paris"}');
    expect(lastSent(rig)).to.deep.include({ response_format: rf });
  });

  it('error status: 422 validation detail reaches the client as a 400, 401 as a 502', async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(res, 422, {
        object: 'error',
        message: { detail: [{ type: 'missing', loc: ['body', 'messages'], msg: 'Field required', input: {} }] },
        type: 'invalid_request_error',
        param: null,
        code: null,
      }),
    );
    let res = await postChat(rig);
    expect(res.status).to.equal(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).to.include(
      'body.messages: Field required',
    );
    rig.up.enqueue((_r, r) => sendJson(r, 401, { message: 'Unauthorized', request_id: 'f0a9' }));
    res = await postChat(rig);
    expect(res.status).to.equal(502);
  });
});
