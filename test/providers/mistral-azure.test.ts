import { expect } from 'chai';
import OpenAI from 'openai';
import { postJson } from '../helpers/gateway';
import { openaiFixtures, sendJson, writeSse } from '../helpers/mock-upstream';
import {
  weatherTool,
  streamWithWeatherTool,
  lastFrameError,
  lastRequest,
  streamChat,
  streamFrames,
  useProviderRig,
} from '../helpers/provider-gateway';

import { promptFilterChunk } from '../helpers/azure-fixtures';
import { mistralChunk } from '../helpers/mistral-fixtures';

describe('provider: mistral', () => {
  const rig = useProviderRig('mistral');

  it("sends Mistral's field names: random_seed, safe_prompt, tool_choice any; Bearer auth on /v1/chat/completions", async () => {
    rig.up.enqueue((_r, res) => sendJson(res, 200, openaiFixtures.completion('Bonjour')));
    const res = await postJson(`${rig.gw.url}/v1/chat/completions`, {
      model: 'p/m',
      seed: 42,
      safe_prompt: true,
      tools: [weatherTool],
      tool_choice: 'required',
      max_completion_tokens: 10,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(res.status).to.equal(200);
    const r = lastRequest(rig);
    expect(r.path).to.equal('/v1/chat/completions');
    expect(r.headers.authorization).to.equal('Bearer sk-provider-key');
    expect(r.json).to.deep.include({
      model: 'native-model',
      random_seed: 42,
      safe_prompt: true,
      tool_choice: 'any',
      max_tokens: 10,
    });
    expect(r.json).to.not.have.any.keys('seed', 'max_completion_tokens');
  });

  it('streams: usage on the finish chunk becomes its own usage chunk; tool calls without index get one', async () => {
    rig.up.enqueue((_r, res) =>
      writeSse(res, [
        mistralChunk({ role: 'assistant', content: '' }),
        mistralChunk({ content: 'Sure' }),
        mistralChunk({
          tool_calls: [
            { id: 'abc123xyz', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } },
            { id: 'def456uvw', function: { name: 'get_weather', arguments: '{"city": "Rome"}' } },
          ],
        }),
        mistralChunk({ content: '' }, 'tool_calls', { prompt_tokens: 20, total_tokens: 48, completion_tokens: 28 }),
      ]),
    );
    const s = await streamWithWeatherTool(rig);
    expect(s.text).to.equal('Sure');
    expect(s.calls.map((c) => [c.id, c.args])).to.deep.equal([
      ['abc123xyz', '{"city": "Paris"}'],
      ['def456uvw', '{"city": "Rome"}'],
    ]);
    expect(s.finishes).to.deep.equal(['tool_calls']);
    expect(s.usage).to.deep.include({ prompt_tokens: 20, completion_tokens: 28 });
  });

  it('maps errors (422 validation as 400, 429, mid-stream error object)', async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(res, 422, {
        object: 'error',
        message: { detail: [{ type: 'missing', loc: ['body', 'messages'], msg: 'Field required' }] },
        type: 'invalid_request_error',
      }),
    );
    expect(
      await rig.client.chat.completions
        .create({ model: 'p/m', messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e),
    ).to.be.instanceOf(OpenAI.BadRequestError);
    rig.up.enqueue((_r, res) =>
      sendJson(res, 429, { object: 'error', message: 'Requests rate limit exceeded', type: 'rate_limited' }),
    );
    expect(
      await rig.client.chat.completions
        .create({ model: 'p/m', messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e),
    ).to.be.instanceOf(OpenAI.RateLimitError);
    rig.up.enqueue((_r, res) =>
      writeSse(res, [mistralChunk({ content: 'a' }), { error: { message: 'Service unavailable', code: 503 } }], {
        done: false,
      }),
    );
    const f = await streamFrames(rig);
    expect(lastFrameError(f).message).to.include('Service unavailable');
  });
});

describe('provider: azure', () => {
  const rig = useProviderRig('azure', { options: { api_version: '2024-10-21' } }, { model: 'my-gpt4o-deployment' });

  it('calls /openai/deployments/{deployment}/chat/completions?api-version with the api-key header', async () => {
    rig.up.enqueue((_r, res) => sendJson(res, 200, openaiFixtures.completion('hello from azure')));
    const c = await rig.client.chat.completions.create({ model: 'p/m', messages: [{ role: 'user', content: 'hi' }] });
    expect(c.choices[0].message.content).to.equal('hello from azure');
    const r = lastRequest(rig);
    expect(r.path).to.equal('/openai/deployments/my-gpt4o-deployment/chat/completions?api-version=2024-10-21');
    expect(r.headers['api-key']).to.equal('sk-provider-key');
    expect(r.headers.authorization).to.equal(undefined);
    expect(r.json).to.not.have.property('model');
  });

  it("streams, skipping Azure's prompt_filter_results chunk, with usage", async () => {
    rig.up.enqueue((_r, res) =>
      writeSse(res, [
        promptFilterChunk,
        openaiFixtures.chunk({ role: 'assistant', content: '' }),
        openaiFixtures.chunk({ content: 'Hi' }),
        openaiFixtures.chunk({}, 'stop'),
        openaiFixtures.usageChunk(5, 1),
      ]),
    );
    const s = await streamChat(rig);
    expect(s.text).to.equal('Hi');
    expect(s.usage).to.deep.include({ prompt_tokens: 5, completion_tokens: 1 });
  });

  it('maps a content_filter refusal to a 400 with code content_filter', async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(res, 400, {
        error: {
          message: "The response was filtered due to the prompt triggering Azure OpenAI's content management policy.",
          type: null,
          param: 'prompt',
          code: 'content_filter',
          status: 400,
        },
      }),
    );
    const e = (await rig.client.chat.completions
      .create({ model: 'p/m', messages: [{ role: 'user', content: 'x' }] })
      .catch((x: unknown) => x)) as InstanceType<typeof OpenAI.APIError>;
    expect(e.status).to.equal(400);
    expect(e.code).to.equal('content_filter');
  });
});
