import { expect } from 'chai';
import { postJson } from '../helpers/gateway';
import { sendJson, writeNdjson } from '../helpers/mock-upstream';
import {
  weatherTool,
  streamWithWeatherTool,
  lastFrameError,
  lastSent,
  postChat,
  streamFrames,
  useProviderRig,
} from '../helpers/provider-gateway';
import { ollamaLine } from '../helpers/ollama-fixtures';

// Ollama /api/chat (docs/reference/providers.md): NDJSON lines, whole tool calls in one line, counts on the done line.
const doneLine = (reason: string, prompt: number, evals: number) =>
  ollamaLine(
    {},
    {
      done: true,
      done_reason: reason,
      total_duration: 3261625500,
      load_duration: 21500042,
      prompt_eval_count: prompt,
      prompt_eval_duration: 28000000,
      eval_count: evals,
      eval_duration: 3180000000,
    },
  );

describe('provider: ollama (conformance)', () => {
  const rig = useProviderRig('ollama');

  it('streams parallel tool calls with stable indexes and distinct ids, finish tool_calls, usage from the done line', async () => {
    rig.up.enqueue((_r, res) =>
      writeNdjson(res, [
        ollamaLine({ content: 'Checking.' }),
        ollamaLine({
          tool_calls: [
            { function: { name: 'get_weather', arguments: { city: 'Toronto' } } },
            { function: { name: 'get_weather', arguments: { city: 'Paris' } } },
          ],
        }),
        ollamaLine({ tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Rome' } } }] }),
        doneLine('stop', 220, 36),
      ]),
    );
    const s = await streamWithWeatherTool(rig);
    expect(s.role).to.equal('assistant');
    expect(s.text).to.equal('Checking.');
    expect(s.calls.map((c) => [c.name, c.args])).to.deep.equal([
      ['get_weather', '{"city":"Toronto"}'],
      ['get_weather', '{"city":"Paris"}'],
      ['get_weather', '{"city":"Rome"}'],
    ]);
    expect(new Set(s.calls.map((c) => c.id)).size).to.equal(3);
    expect(s.finishes).to.deep.equal(['tool_calls']);
    expect(s.usage).to.deep.include({ prompt_tokens: 220, completion_tokens: 36, total_tokens: 256 });
    expect(lastSent(rig)).to.deep.include({ stream: true });
  });

  it('sends tool results with the function name, json_schema as format, and no tools for tool_choice none', async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(res, 200, {
        ...ollamaLine({ content: '{"temp":22}' }),
        done: true,
        done_reason: 'stop',
        prompt_eval_count: 5,
        eval_count: 4,
      }),
    );
    const schema = { type: 'object', properties: { temp: { type: 'number' } }, required: ['temp'] };
    await rig.client.chat.completions.create({
      model: 'p/m',
      tools: [weatherTool],
      tool_choice: 'none',
      response_format: { type: 'json_schema', json_schema: { name: 'w', schema } },
      messages: [
        { role: 'user', content: 'weather' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '22 degrees' },
      ],
    });
    const b = lastSent(rig);
    expect(b).to.not.have.property('tools');
    expect(b.format).to.deep.equal(schema);
    expect(b.messages).to.deep.equal([
      { role: 'user', content: 'weather' },
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Paris' } } }],
      },
      { role: 'tool', content: '22 degrees', tool_name: 'get_weather' },
    ]);
  });

  it('refuses a remote image URL before calling Ollama (it takes base64 only)', async () => {
    const before = rig.up.requests.length;
    const res = await postJson(`${rig.gw.url}/v1/chat/completions`, {
      model: 'p/m',
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }],
    });
    expect(res.status).to.equal(400);
    expect(rig.up.requests.length).to.equal(before);
  });

  it('a stream cut before the done line ends in a stream_interrupted error event', async () => {
    rig.up.enqueue((_r, res) => writeNdjson(res, [ollamaLine({ content: 'The' }), ollamaLine({ content: ' sky' })]));
    const f = await streamFrames(rig);
    expect(lastFrameError(f).code).to.equal('stream_interrupted');
  });

  it('error status 500 stays a 5xx, 400 a 400 with the upstream text', async () => {
    rig.up.enqueue((_r, res) => sendJson(res, 500, { error: 'llama runner process has terminated: exit status 2' }));
    let res = await postChat(rig);
    expect(res.status).to.be.within(500, 599);
    rig.up.enqueue((_r, r) => sendJson(r, 400, { error: 'invalid options: num_predikt' }));
    res = await postChat(rig);
    expect(res.status).to.equal(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).to.include('invalid options');
  });
});
