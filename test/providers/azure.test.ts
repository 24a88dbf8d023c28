import { ConfigError } from '../../src/config/load';
import { expect } from 'chai';
import { postJson, startTestGateway, testConfig } from '../helpers/gateway';
import { MockUpstream, openaiFixtures, sendJson, writeSse } from '../helpers/mock-upstream';
import {
  collect,
  providerRig,
  weatherTool,
  streamWithWeatherTool,
  lastFrameError,
  lastRequest,
  lastSent,
  postChat,
  streamFrames,
  useProviderRig,
} from '../helpers/provider-gateway';

import { azureChunk, promptFilterChunk, safeFilters } from '../helpers/azure-fixtures';

describe('provider: azure (conformance)', () => {
  const rig = useProviderRig('azure', { options: { api_version: '2024-10-21' } }, { model: 'gpt4o-prod' });

  it('plain answer with parallel tool calls keeps their ids, finish tool_calls and usage', async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(res, 200, {
        ...openaiFixtures.completion('', 'gpt-4o-2024-08-06'),
        choices: [
          {
            index: 0,
            finish_reason: 'tool_calls',
            logprobs: null,
            content_filter_results: {},
            message: {
              role: 'assistant',
              content: null,
              tool_calls: [
                { id: 'call_7qV3', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
                { id: 'call_8wX4', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
              ],
            },
          },
        ],
        prompt_filter_results: [{ prompt_index: 0, content_filter_results: safeFilters }],
      }),
    );
    const c = await rig.client.chat.completions.create({
      model: 'p/m',
      tools: [weatherTool],
      parallel_tool_calls: true,
      messages: [{ role: 'user', content: 'weather in Paris and Rome' }],
    });
    expect(c.choices[0].finish_reason).to.equal('tool_calls');
    expect(
      c.choices[0].message.tool_calls?.map((t) => (t.type === 'function' ? [t.id, t.function.arguments] : [])),
    ).to.deep.equal([
      ['call_7qV3', '{"city":"Paris"}'],
      ['call_8wX4', '{"city":"Rome"}'],
    ]);
    expect(c.usage).to.deep.include({ prompt_tokens: 19, completion_tokens: 10, total_tokens: 29 });
    const r = lastRequest(rig);
    expect(r.path).to.equal('/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21');
    expect(r.json).to.deep.include({ parallel_tool_calls: true, tools: [weatherTool] });
  });

  it('streams two tool calls with argument fragments by index, asks the upstream for usage, and always yields a usage chunk', async () => {
    rig.up.enqueue((_r, res) =>
      writeSse(res, [
        promptFilterChunk,
        azureChunk({
          role: 'assistant',
          content: null,
          tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }],
        }),
        azureChunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
        azureChunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
        azureChunk({
          tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '' } }],
        }),
        azureChunk({ tool_calls: [{ index: 1, function: { arguments: '{"city":"Rome"}' } }] }),
        azureChunk({}, 'tool_calls'),
        openaiFixtures.usageChunk(40, 31, 'gpt-4o-2024-08-06'),
      ]),
    );
    const s = await streamWithWeatherTool(rig);
    expect(s.role).to.equal('assistant');
    expect(s.calls).to.deep.equal([
      { id: 'call_a', name: 'get_weather', args: '{"city":"Paris"}' },
      { id: 'call_b', name: 'get_weather', args: '{"city":"Rome"}' },
    ]);
    expect(s.finishes).to.deep.equal(['tool_calls']);
    expect(s.usage).to.deep.include({ prompt_tokens: 40, completion_tokens: 31, total_tokens: 71 });
    expect(lastSent(rig)).to.deep.include({
      stream: true,
      stream_options: { include_usage: true },
    });
  });

  it('keeps cached and reasoning token details of the usage (o-series deployments)', async () => {
    const base = openaiFixtures.completion('ok', 'o3-mini-2025-01-31');
    rig.up.enqueue((_r, res) =>
      sendJson(res, 200, {
        ...base,
        usage: {
          prompt_tokens: 2048,
          completion_tokens: 300,
          total_tokens: 2348,
          prompt_tokens_details: { cached_tokens: 1024 },
          completion_tokens_details: { reasoning_tokens: 256 },
        },
      }),
    );
    const c = await rig.client.chat.completions.create({ model: 'p/m', messages: [{ role: 'user', content: 'x' }] });
    expect(c.usage?.prompt_tokens_details?.cached_tokens).to.equal(1024);
    expect(c.usage?.completion_tokens_details?.reasoning_tokens).to.equal(256);
  });

  it('passes a content_filter finish through in a stream', async () => {
    rig.up.enqueue((_r, res) =>
      writeSse(res, [
        azureChunk({ role: 'assistant', content: 'I' }),
        azureChunk({}, 'content_filter'),
        openaiFixtures.usageChunk(3, 1),
      ]),
    );
    const s = await collect(
      await rig.client.chat.completions.create({
        model: 'p/m',
        stream: true,
        messages: [{ role: 'user', content: 'x' }],
      }),
    );
    expect(s.finishes).to.deep.equal(['content_filter']);
  });

  it('a mid-stream error object and a cut stream end in an error event, never a silent [DONE]', async () => {
    rig.up.enqueue((_r, res) =>
      writeSse(
        res,
        [
          azureChunk({ role: 'assistant', content: 'a' }),
          { error: { code: '500', message: 'The server had an error while processing your request.' } },
        ],
        { done: false },
      ),
    );
    let f = await streamFrames(rig);
    expect(lastFrameError(f).message).to.include('server had an error');
    rig.up.enqueue((_r, res) => writeSse(res, [azureChunk({ role: 'assistant', content: 'a' })], { done: false }));
    f = await streamFrames(rig);
    expect(lastFrameError(f).code).to.equal('stream_interrupted');
  });

  it('an azure provider without api_base is refused when the config is loaded, naming the field', async () => {
    const err = await providerRig('azure', { api_base: undefined }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ConfigError);
    expect((err as ConfigError).problems).to.deep.include({
      pointer: '/providers/0/api_base',
      message: 'an azure provider needs its resource endpoint as api_base (https://<resource>.openai.azure.com)',
    });
  });

  it('per-request api_version and deployment_id (spec 4.1) reach the path when the operator allows overrides', async () => {
    const up = await new MockUpstream().start();
    const gw = await startTestGateway(
      testConfig({
        providers: [
          {
            name: 'az',
            type: 'azure',
            api_base: up.url,
            api_key: 'sk-provider-key',
            options: { api_version: '2024-06-01' },
          },
        ],
        models: [{ id: 'az/gpt', deployments: [{ provider: 'az', model: 'gpt4o-prod' }] }],
        plugins: [{ fallback: { num_retries: 0, overrides: { allow: true, api_base_allowlist: [] } } }, 'routing'],
      }),
    );
    try {
      up.handler = (_r, res) => sendJson(res, 200, openaiFixtures.completion('ok'));
      let res = await postJson(`${gw.url}/v1/chat/completions`, {
        model: 'az/gpt',
        messages: [{ role: 'user', content: 'x' }],
      });
      expect(res.status).to.equal(200);
      expect(up.requests[0].path).to.equal('/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-06-01');
      res = await postJson(`${gw.url}/v1/chat/completions`, {
        model: 'az/gpt',
        api_version: '2025-01-01-preview',
        deployment_id: 'gpt4o-canary',
        messages: [{ role: 'user', content: 'x' }],
      });
      expect(res.status).to.equal(200);
      expect(up.requests[1].path).to.equal(
        '/openai/deployments/gpt4o-canary/chat/completions?api-version=2025-01-01-preview',
      );
      expect(up.requests[1].headers['api-key']).to.equal('sk-provider-key');
      expect(up.requests[1].json).to.not.have.any.keys('api_version', 'deployment_id');
    } finally {
      await gw.stop();
      await up.stop();
    }
  });

  it('maps 401 to a 502 without the upstream text, 429 with retryable status', async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(res, 401, {
        error: { code: '401', message: 'Access denied due to invalid subscription key or wrong API endpoint.' },
      }),
    );
    let res = await postChat(rig);
    expect(res.status).to.equal(502);
    expect(await res.text()).to.not.include('subscription key');
    rig.up.enqueue((_r, r) =>
      sendJson(
        r,
        429,
        {
          error: {
            code: '429',
            message: 'Requests to the ChatCompletions_Create Operation have exceeded token rate limit.',
          },
        },
        { 'retry-after': '2' },
      ),
    );
    res = await postChat(rig);
    expect(res.status).to.equal(429);
  });
});
