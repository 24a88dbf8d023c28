import { expect } from 'chai';
import OpenAI from 'openai';
import { postJson } from '../helpers/gateway';
import { sendJson, writeSse, writeNdjson } from '../helpers/mock-upstream';
import {
  providerRig,
  weatherTool,
  streamWithWeatherTool,
  lastFrameError,
  lastRequest,
  streamChat,
  streamFrames,
  useProviderRig,
} from '../helpers/provider-gateway';

describe('provider: ollama', () => {
  const rig = useProviderRig('ollama');

  it('translates to /api/chat: options under Ollama names, images, tools, stream false', async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(res, 200, {
        model: 'llama3.2',
        created_at: '2023-12-12T14:13:43.416799Z',
        message: { role: 'assistant', content: 'Hello! How are you today?' },
        done: true,
        done_reason: 'stop',
        total_duration: 5191566416,
        prompt_eval_count: 26,
        eval_count: 298,
      }),
    );
    const c = await rig.client.chat.completions.create({
      model: 'p/m',
      temperature: 0.2,
      max_tokens: 64,
      seed: 3,
      stop: ['x'],
      tools: [weatherTool],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is in this image?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
      ],
    });
    expect(c.choices[0].message.content).to.equal('Hello! How are you today?');
    expect(c.usage).to.deep.include({ prompt_tokens: 26, completion_tokens: 298 });
    const r = lastRequest(rig);
    expect(r.path).to.equal('/api/chat');
    expect(r.json).to.deep.equal({
      model: 'native-model',
      stream: false,
      options: { temperature: 0.2, seed: 3, num_predict: 64, stop: ['x'] },
      messages: [{ role: 'user', content: 'what is in this image?', images: ['iVBORw0KGgo='] }],
      tools: [weatherTool],
    });
  });

  it('parses tool calls (Ollama gives arguments as an object) and streams NDJSON with usage from the last line', async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(res, 200, {
        model: 'llama3.2',
        message: {
          role: 'assistant',
          content: '',
          tool_calls: [
            { function: { name: 'get_weather', arguments: { city: 'Toronto' } } },
            { function: { name: 'get_weather', arguments: { city: 'Paris' } } },
          ],
        },
        done: true,
        done_reason: 'stop',
        prompt_eval_count: 10,
        eval_count: 20,
      }),
    );
    const t = await rig.client.chat.completions.create({
      model: 'p/m',
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'weather' }],
    });
    expect(t.choices[0].finish_reason).to.equal('tool_calls');
    expect(
      (t.choices[0].message.tool_calls as Array<{ function: { arguments: string } }>).map((x) => x.function.arguments),
    ).to.deep.equal(['{"city":"Toronto"}', '{"city":"Paris"}']);
    rig.up.enqueue((_r, res) =>
      writeNdjson(res, [
        {
          model: 'llama3.2',
          created_at: '2023-08-04T08:52:19.385406455-07:00',
          message: { role: 'assistant', content: 'The' },
          done: false,
        },
        { model: 'llama3.2', message: { role: 'assistant', content: ' sky' }, done: false },
        {
          model: 'llama3.2',
          message: { role: 'assistant', content: '' },
          done: true,
          done_reason: 'length',
          total_duration: 4883583458,
          prompt_eval_count: 26,
          eval_count: 2,
        },
      ]),
    );
    const s = await streamChat(rig, { messages: [{ role: 'user', content: 'why is the sky blue?' }] });
    expect(s.text).to.equal('The sky');
    expect(s.finishes).to.deep.equal(['length']);
    expect(s.usage).to.deep.include({ prompt_tokens: 26, completion_tokens: 2 });
  });

  it('a mid-stream error line and an error status map to errors', async () => {
    rig.up.enqueue((_r, res) =>
      writeNdjson(res, [
        { message: { role: 'assistant', content: 'a' }, done: false },
        { error: 'an unknown error was encountered while running the model' },
      ]),
    );
    const f = await streamFrames(rig);
    expect(lastFrameError(f).message).to.include('unknown error');
    rig.up.enqueue((_r, res) => sendJson(res, 404, { error: "model 'llama9' not found, try pulling it first" }));
    const e = (await rig.client.chat.completions
      .create({ model: 'p/m', messages: [{ role: 'user', content: 'x' }] })
      .catch((x: unknown) => x)) as InstanceType<typeof OpenAI.APIError>;
    expect(e.status).to.equal(404);
    expect(e.message).to.include('not found');
  });

  it('raw mode: /api/generate with the prompt built from the prompt-template fields', async () => {
    const raw = await providerRig('ollama', {}, { options: { raw: true } });
    try {
      raw.up.enqueue((_r, res) =>
        sendJson(res, 200, {
          model: 'mistral',
          response: 'Paris.',
          done: true,
          done_reason: 'stop',
          prompt_eval_count: 12,
          eval_count: 2,
        }),
      );
      const res = await postJson(`${raw.gw.url}/v1/chat/completions`, {
        model: 'p/m',
        hf_model_name: 'mistralai/Mistral-7B-Instruct-v0.2',
        messages: [
          { role: 'system', content: 'Short answers.' },
          { role: 'user', content: 'Capital of France?' },
        ],
      });
      expect(
        ((await res.json()) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content,
      ).to.equal('Paris.');
      const r = raw.up.requests[0];
      expect(r.path).to.equal('/api/generate');
      expect(r.json).to.deep.equal({
        model: 'native-model',
        stream: false,
        prompt: '<s>[INST] Short answers.\n\nCapital of France? [/INST]',
        raw: true,
      });
    } finally {
      await raw.stop();
    }
  });
});

describe('provider: cohere', () => {
  const rig = useProviderRig('cohere');

  it('translates to /v2/chat (p, k, stop_sequences, tool_choice REQUIRED) and parses the answer and usage', async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(res, 200, {
        id: 'c14c80c3-18eb-4519-9460-6c92edd8cfb4',
        finish_reason: 'COMPLETE',
        message: { role: 'assistant', content: [{ type: 'text', text: 'LLMs are models.' }] },
        usage: {
          billed_units: { input_tokens: 5, output_tokens: 418 },
          tokens: { input_tokens: 71, output_tokens: 418 },
        },
      }),
    );
    const c = await rig.client.chat.completions.create({
      model: 'p/m',
      top_p: 0.9,
      top_k: 40,
      stop: 'END',
      tools: [weatherTool],
      tool_choice: 'required',
      messages: [
        { role: 'system', content: 'be nice' },
        { role: 'user', content: 'hi' },
      ],
    } as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming);
    expect(c.choices[0].message.content).to.equal('LLMs are models.');
    expect(c.usage).to.deep.include({ prompt_tokens: 5, completion_tokens: 418 });
    const r = lastRequest(rig);
    expect(r.path).to.equal('/v2/chat');
    expect(r.headers.authorization).to.equal('Bearer sk-provider-key');
    expect(r.json).to.deep.include({
      model: 'native-model',
      p: 0.9,
      k: 40,
      stop_sequences: ['END'],
      tool_choice: 'REQUIRED',
      stream: false,
    });
  });

  it('parses tool calls and streams text, parallel tool calls with argument fragments, finish and usage', async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(res, 200, {
        id: 'x',
        finish_reason: 'TOOL_CALL',
        message: {
          role: 'assistant',
          tool_plan: 'I will look it up.',
          tool_calls: [
            {
              id: 'get_weather_1byjy32y4hvq',
              type: 'function',
              function: { name: 'get_weather', arguments: '{"city":"Toronto"}' },
            },
          ],
        },
        usage: { tokens: { input_tokens: 10, output_tokens: 5 } },
      }),
    );
    const t = await rig.client.chat.completions.create({
      model: 'p/m',
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'weather' }],
    });
    expect(t.choices[0].finish_reason).to.equal('tool_calls');
    expect(t.choices[0].message.tool_calls).to.deep.equal([
      {
        id: 'get_weather_1byjy32y4hvq',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Toronto"}' },
      },
    ]);
    const e = (type: string, data: Record<string, unknown>) => ({ event: type, data: { type, ...data } });
    rig.up.enqueue((_r, res) =>
      writeSse(
        res,
        [
          e('message-start', {
            id: 'abc',
            delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } },
          }),
          e('content-start', { index: 0, delta: { message: { content: { type: 'text', text: '' } } } }),
          e('content-delta', { index: 0, delta: { message: { content: { text: 'Checking' } } } }),
          e('content-end', { index: 0 }),
          e('tool-call-start', {
            index: 0,
            delta: {
              message: { tool_calls: { id: 'a1', type: 'function', function: { name: 'get_weather', arguments: '' } } },
            },
          }),
          e('tool-call-delta', {
            index: 0,
            delta: { message: { tool_calls: { function: { arguments: '{"city":' } } } },
          }),
          e('tool-call-delta', {
            index: 0,
            delta: { message: { tool_calls: { function: { arguments: '"Paris"}' } } } },
          }),
          e('tool-call-end', { index: 0 }),
          e('tool-call-start', {
            index: 1,
            delta: {
              message: {
                tool_calls: {
                  id: 'b2',
                  type: 'function',
                  function: { name: 'get_weather', arguments: '{"city":"Rome"}' },
                },
              },
            },
          }),
          e('tool-call-end', { index: 1 }),
          e('message-end', {
            delta: {
              finish_reason: 'TOOL_CALL',
              usage: {
                billed_units: { input_tokens: 3, output_tokens: 9 },
                tokens: { input_tokens: 30, output_tokens: 9 },
              },
            },
          }),
        ],
        { named: true },
      ),
    );
    const s = await streamWithWeatherTool(rig);
    expect(s.text).to.equal('Checking');
    expect(s.calls).to.deep.equal([
      { id: 'a1', name: 'get_weather', args: '{"city":"Paris"}' },
      { id: 'b2', name: 'get_weather', args: '{"city":"Rome"}' },
    ]);
    expect(s.finishes).to.deep.equal(['tool_calls']);
    expect(s.usage).to.deep.include({ prompt_tokens: 3, completion_tokens: 9 });
  });

  it('maps errors: 429, 400, and a stream that ends without message-end', async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(res, 429, { message: 'You are using a Trial key, which is limited to 10 API calls / minute.' }),
    );
    expect(
      await rig.client.chat.completions
        .create({ model: 'p/m', messages: [{ role: 'user', content: 'x' }] })
        .catch((x: unknown) => x),
    ).to.be.instanceOf(OpenAI.RateLimitError);
    rig.up.enqueue((_r, res) =>
      sendJson(res, 400, { message: 'invalid request: message must be at least 1 token long' }),
    );
    expect(
      await rig.client.chat.completions
        .create({ model: 'p/m', messages: [{ role: 'user', content: 'x' }] })
        .catch((x: unknown) => x),
    ).to.be.instanceOf(OpenAI.BadRequestError);
    rig.up.enqueue((_r, res) =>
      writeSse(
        res,
        [
          { event: 'message-start', data: { type: 'message-start', delta: {} } },
          { event: 'content-delta', data: { type: 'content-delta', delta: { message: { content: { text: 'cut' } } } } },
        ],
        { named: true },
      ),
    );
    const f = await streamFrames(rig);
    expect(lastFrameError(f).code).to.equal('stream_interrupted');
  });
});
