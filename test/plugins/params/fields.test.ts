import { expect } from 'chai';
import fc from 'fast-check';
import { startTestGateway, testConfig, postJson, type TestGateway } from '../../helpers/gateway';
import { MockUpstream, openaiFixtures, sendJson, writeSse } from '../../helpers/mock-upstream';
import { sdkClient } from '../../helpers/sdk';

const ALL_PARAMS = [
  'temperature',
  'top_p',
  'top_k',
  'min_p',
  'top_a',
  'seed',
  'frequency_penalty',
  'presence_penalty',
  'repetition_penalty',
  'max_tokens',
  'max_completion_tokens',
  'stop',
  'n',
  'verbosity',
  'response_format',
  'structured_outputs',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'logit_bias',
  'logprobs',
  'top_logprobs',
  'user',
];
const base = { model: 'up/all', messages: [{ role: 'user', content: 'hi' }] };
const tool = {
  type: 'function',
  function: { name: 'get_time', description: 'time', parameters: { type: 'object', properties: {}, required: [] } },
};

/** [field, a valid body fragment, an invalid one, the param the 400 must name, its code] — every field of spec 4.1. */
const CASES: Array<[string, Record<string, unknown>, Record<string, unknown>, string, string]> = [
  ['model', { model: 'up/all' }, { model: 7 }, 'model', 'invalid_model'],
  ['messages', {}, { messages: 'hi' }, 'messages', 'invalid_messages'],
  [
    'messages[].role',
    {
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'hi' },
      ],
    },
    { messages: [{ role: 'robot', content: 'hi' }] },
    'messages[0].role',
    'invalid_value',
  ],
  [
    'messages[].content',
    {
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'hi' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          ],
        },
      ],
    },
    { messages: [{ role: 'user', content: 5 }] },
    'messages[0].content',
    'invalid_type',
  ],
  [
    'messages[].content[].image_url.url (not empty, checked without walking a base64 image)',
    {
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }],
    },
    { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: '' } }] }] },
    'messages[0].content',
    'invalid_type',
  ],
  [
    'messages[].content null',
    {
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } },
        { role: 'function', name: 'f', content: '1' },
      ],
    },
    { messages: [{ role: 'user', content: null }] },
    'messages[0].content',
    'invalid_type',
  ],
  [
    'messages[].name',
    { messages: [{ role: 'user', name: 'alice_1', content: 'hi' }] },
    { messages: [{ role: 'user', name: 'bad name!', content: 'hi' }] },
    'messages[0].name',
    'invalid_format',
  ],
  [
    'messages[].name (function)',
    { messages: [{ role: 'function', name: 'f', content: 'x' }] },
    {
      messages: [
        { role: 'user', content: 'x' },
        { role: 'function', content: 'x' },
      ],
    },
    'messages[1].name',
    'missing_field',
  ],
  [
    'messages[].name length',
    { messages: [{ role: 'user', name: 'a'.repeat(64), content: 'x' }] },
    { messages: [{ role: 'user', name: 'a'.repeat(65), content: 'x' }] },
    'messages[0].name',
    'invalid_format',
  ],
  [
    'messages[].tool_call_id',
    {
      messages: [
        { role: 'user', content: 'x' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'ok' },
      ],
    },
    { messages: [{ role: 'tool', content: 'ok' }] },
    'messages[0].tool_call_id',
    'missing_field',
  ],
  [
    'messages[].function_call',
    { messages: [{ role: 'assistant', content: null, function_call: { name: 'f', arguments: '{}' } }] },
    { messages: [{ role: 'assistant', content: null, function_call: 'f' }] },
    'messages[0].function_call',
    'invalid_type',
  ],
  ['temperature', { temperature: 2 }, { temperature: 2.1 }, 'temperature', 'out_of_range'],
  ['top_p', { top_p: 0 }, { top_p: 1.5 }, 'top_p', 'out_of_range'],
  ['top_k', { top_k: 0 }, { top_k: -1 }, 'top_k', 'out_of_range'],
  ['top_k type', { top_k: 40 }, { top_k: 1.5 }, 'top_k', 'invalid_type'],
  ['min_p', { min_p: 1 }, { min_p: -0.1 }, 'min_p', 'out_of_range'],
  ['top_a', { top_a: 0.5 }, { top_a: 1.01 }, 'top_a', 'out_of_range'],
  ['seed', { seed: 42 }, { seed: 'x' }, 'seed', 'invalid_type'],
  ['frequency_penalty', { frequency_penalty: -2 }, { frequency_penalty: -2.5 }, 'frequency_penalty', 'out_of_range'],
  ['presence_penalty', { presence_penalty: 2 }, { presence_penalty: 3 }, 'presence_penalty', 'out_of_range'],
  ['repetition_penalty', { repetition_penalty: 1 }, { repetition_penalty: 2.5 }, 'repetition_penalty', 'out_of_range'],
  ['max_tokens', { max_tokens: 0 }, { max_tokens: -1 }, 'max_tokens', 'out_of_range'],
  ['max_tokens bound', { max_tokens: 1000 }, { max_tokens: 5000 }, 'max_tokens', 'out_of_range'],
  // 2,000 words in 12,000 characters: too many characters for 3,000 more tokens in 4,096, but 2,003 tokens fit
  // 2,000 and not 2,100: the prompt is tokenized when its length cannot decide.
  [
    'max_tokens bound, counted',
    { max_tokens: 2000, messages: [{ role: 'user', content: 'hello '.repeat(2000) }] },
    { max_tokens: 2100, messages: [{ role: 'user', content: 'hello '.repeat(2000) }] },
    'max_tokens',
    'out_of_range',
  ],
  [
    'max_completion_tokens',
    { max_completion_tokens: 0 },
    { max_completion_tokens: -5 },
    'max_completion_tokens',
    'out_of_range',
  ],
  ['stop', { stop: ['a', 'b', 'c', 'd'] }, { stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop', 'too_many_items'],
  ['stop string', { stop: 'END' }, { stop: 5 }, 'stop', 'invalid_type'],
  ['n', { n: 128 }, { n: 129 }, 'n', 'out_of_range'],
  ['n min', { n: 1 }, { n: 0 }, 'n', 'out_of_range'],
  ['verbosity', { verbosity: 'low' }, { verbosity: 'loud' }, 'verbosity', 'invalid_value'],
  [
    'response_format',
    { response_format: { type: 'json_object' } },
    { response_format: { type: 'xml' } },
    'response_format.type',
    'invalid_value',
  ],
  [
    'response_format json_schema',
    {
      response_format: { type: 'json_schema', json_schema: { name: 'out', schema: { type: 'object' }, strict: true } },
    },
    { response_format: { type: 'json_schema' } },
    'response_format.json_schema',
    'missing_field',
  ],
  [
    'structured_outputs',
    { structured_outputs: true },
    { structured_outputs: 'yes' },
    'structured_outputs',
    'invalid_type',
  ],
  [
    'tools',
    { tools: [tool] },
    { tools: [{ type: 'retrieval', function: tool.function }] },
    'tools[0].type',
    'invalid_value',
  ],
  [
    'tools function name',
    { tools: [tool] },
    { tools: [{ type: 'function', function: { name: 'has space' } }] },
    'tools[0].function.name',
    'invalid_format',
  ],
  [
    'tool_choice',
    { tools: [tool], tool_choice: 'required' },
    { tools: [tool], tool_choice: 'sometimes' },
    'tool_choice',
    'invalid_type',
  ],
  [
    'tool_choice object',
    { tools: [tool], tool_choice: { type: 'function', function: { name: 'get_time' } } },
    { tools: [tool], tool_choice: { type: 'function', function: { name: 'other' } } },
    'tool_choice',
    'invalid_value',
  ],
  [
    'parallel_tool_calls',
    { tools: [tool], parallel_tool_calls: false },
    { parallel_tool_calls: false },
    'parallel_tool_calls',
    'invalid_combination',
  ],
  [
    'functions',
    { functions: [{ name: 'f', parameters: { type: 'object' } }] },
    { functions: [{ description: 'no name' }] },
    'functions[0].name',
    'missing_field',
  ],
  [
    'function_call',
    { functions: [{ name: 'f' }], function_call: { name: 'f' } },
    { functions: [{ name: 'f' }], function_call: 7 },
    'function_call',
    'invalid_type',
  ],
  [
    'logit_bias',
    { logit_bias: { '50256': -100, '11': 100 } },
    { logit_bias: { '50256': -101 } },
    'logit_bias.50256',
    'out_of_range',
  ],
  ['logit_bias keys', { logit_bias: { '1': 1 } }, { logit_bias: { abc: 1 } }, 'logit_bias', 'invalid_format'],
  ['logprobs', { logprobs: true }, { logprobs: 'true' }, 'logprobs', 'invalid_type'],
  [
    'top_logprobs',
    { logprobs: true, top_logprobs: 20 },
    { logprobs: true, top_logprobs: 21 },
    'top_logprobs',
    'out_of_range',
  ],
  [
    'top_logprobs needs logprobs',
    { logprobs: true, top_logprobs: 0 },
    { top_logprobs: 3 },
    'top_logprobs',
    'invalid_combination',
  ],
  ['stream', { stream: false }, { stream: 'yes' }, 'stream', 'invalid_type'],
  [
    'stream_options',
    { stream: true, stream_options: { include_usage: true } },
    { stream_options: { include_usage: true } },
    'stream_options',
    'stream_options_without_stream',
  ],
  ['user', { user: 'user-123' }, { user: 123 }, 'user', 'invalid_type'],
  ['timeout', { timeout: 30 }, { timeout: -1 }, 'timeout', 'invalid_timeout'],
  ['timeout below 1 ms', { timeout: 0.25 }, { timeout: 0.0009 }, 'timeout', 'invalid_timeout'],
  ['timeout far below 1 ms', { timeout: 2.5 }, { timeout: 1.8718200105192242e-181 }, 'timeout', 'invalid_timeout'],
  ['headers', { headers: { 'x-trace': '1' } }, { headers: { 'x-trace': 1 } }, 'headers.x-trace', 'invalid_type'],
  ['extra_headers', { extra_headers: { 'x-a': 'b' } }, { extra_headers: 'x' }, 'extra_headers', 'invalid_type'],
  ['metadata', { metadata: { run: '1' } }, { metadata: [1] }, 'metadata', 'invalid_type'],
  ['num_retries', { num_retries: 2 }, { num_retries: -1 }, 'num_retries', 'out_of_range'],
  ['fallbacks', { fallbacks: ['up/all'] }, { fallbacks: [3] }, 'fallbacks[0]', 'invalid_type'],
  [
    'context_window_fallback_dict',
    { context_window_fallback_dict: { 'up/all': 'up/all' } },
    { context_window_fallback_dict: { a: 1 } },
    'context_window_fallback_dict.a',
    'invalid_type',
  ],
  [
    'input_cost_per_token',
    { input_cost_per_token: 0.000001 },
    { input_cost_per_token: -1 },
    'input_cost_per_token',
    'out_of_range',
  ],
  [
    'output_cost_per_token',
    { output_cost_per_token: 0.000002 },
    { output_cost_per_token: 'cheap' },
    'output_cost_per_token',
    'invalid_type',
  ],
  [
    'initial_prompt_value',
    { initial_prompt_value: 'Hi' },
    { initial_prompt_value: 1 },
    'initial_prompt_value',
    'invalid_type',
  ],
  [
    'roles',
    { roles: { user: { pre_message: '[U]', post_message: '[/U]' } } },
    { roles: { user: 'x' } },
    'roles.user',
    'invalid_type',
  ],
  [
    'final_prompt_value',
    { final_prompt_value: 'Bye' },
    { final_prompt_value: false },
    'final_prompt_value',
    'invalid_type',
  ],
  ['bos_token', { bos_token: '<s>' }, { bos_token: 1 }, 'bos_token', 'invalid_type'],
  ['eos_token', { eos_token: '</s>' }, { eos_token: [] }, 'eos_token', 'invalid_type'],
  [
    'hf_model_name',
    { hf_model_name: 'meta-llama/Llama-2-7b-chat-hf' },
    { hf_model_name: 2 },
    'hf_model_name',
    'invalid_type',
  ],
  ['api_version', { api_version: '2024-10-21' }, { api_version: 1 }, 'api_version', 'invalid_type'],
  ['deployment_id', { deployment_id: 'dep' }, { deployment_id: '' }, 'deployment_id', 'invalid_length'],
  ['model_list', { model_list: [] }, { model_list: 'x' }, 'model_list', 'invalid_type'],
  ['api_key', { api_key: 'k' }, { api_key: 5 }, 'api_key', 'invalid_type'],
  ['api_base', { api_base: 'https://x.example' }, { api_base: 5 }, 'api_base', 'invalid_type'],
];

describe('params: every field of spec 4.1, valid and invalid', () => {
  let up: MockUpstream;
  let gw: TestGateway;
  before(async () => {
    up = await new MockUpstream().start();
    up.handler = (req, res) =>
      (req.json as { stream?: boolean }).stream
        ? writeSse(res, [openaiFixtures.chunk({ role: 'assistant', content: 'ok' }), openaiFixtures.chunk({}, 'stop')])
        : sendJson(res, 200, openaiFixtures.completion('ok'));
    gw = await startTestGateway(
      testConfig({
        providers: [{ name: 'up', type: 'openai', api_base: `${up.url}/v1` }],
        models: [
          {
            id: 'up/all',
            context_length: 4096,
            supported_params: ALL_PARAMS,
            deployments: [{ provider: 'up', model: 'm' }],
          },
        ],
        plugins: ['params', 'routing'],
      }),
    );
  });
  after(async () => {
    await gw.stop();
    await up.stop();
  });

  for (const [field, valid, invalid, param, code] of CASES) {
    it(`${field}: valid passes, invalid is a 400 naming ${param}`, async () => {
      const n = up.requests.length;
      const ok = await postJson(`${gw.url}/v1/chat/completions`, { ...base, ...valid });
      expect(ok.status, `${field} valid: ${await ok.clone().text()}`).to.equal(200);
      await ok.arrayBuffer();
      expect(up.requests.length).to.equal(n + 1);
      const bad = await postJson(`${gw.url}/v1/chat/completions`, { ...base, ...invalid });
      const body = (await bad.json()) as { error: { param: string; code: string; message: string; type: string } };
      expect(bad.status, field).to.equal(400);
      expect(body.error.param, field).to.equal(param);
      expect(body.error.code, field).to.equal(code);
      expect(body.error.type).to.equal('invalid_request_error');
      expect(up.requests.length, 'nothing sent upstream').to.equal(n + 1);
    });
  }

  it('reports every problem at once, in a stable order, the first one as param', async () => {
    const body = {
      ...base,
      temperature: 9,
      messages: [
        { role: 'user', content: 'x' },
        { role: 'function', content: 'y' },
      ],
      n: 0,
      stop: [1],
    };
    const r1 = (await (await postJson(`${gw.url}/v1/chat/completions`, body)).json()) as {
      error: { param: string; message: string };
    };
    const r2 = (await (await postJson(`${gw.url}/v1/chat/completions`, body)).json()) as {
      error: { param: string; message: string };
    };
    expect(r1).to.deep.equal(r2);
    expect(r1.error.param).to.equal('temperature');
    for (const p of ['temperature', 'stop[0]', 'n']) expect(r1.error.message).to.include(p);
  });

  it('unknown fields pass through to the upstream unchanged', async () => {
    await postJson(`${gw.url}/v1/chat/completions`, { ...base, vendor_extension: { a: [1, 2] }, transforms_x: 'y' });
    expect(up.requests[up.requests.length - 1].json).to.deep.include({
      vendor_extension: { a: [1, 2] },
      transforms_x: 'y',
    });
  });

  it('random JSON never makes the validator throw or the gateway answer 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(
          fc.constantFrom(
            ...ALL_PARAMS,
            'messages',
            'stream',
            'stream_options',
            'model',
            'timeout',
            'headers',
            'fallbacks',
            'functions',
            'roles',
          ),
          fc.jsonValue(),
          { maxKeys: 6 },
        ),
        async (extra) => {
          const res = await postJson(`${gw.url}/v1/chat/completions`, { ...base, ...extra });
          const body = await res.text();
          if (res.status < 500) return true;
          // The one 5xx a body may ask for: its own `timeout` (seconds, 1 ms at least) running out before the answer.
          const own = typeof extra.timeout === 'number' && extra.timeout < 1 && res.status === 504;
          return own && (JSON.parse(body) as { error: { code: string } }).error.code === 'upstream_timeout';
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('params: unsupported parameters and deprecated functions', () => {
  let up: MockUpstream;
  let gw: TestGateway;
  before(async () => {
    up = await new MockUpstream().start();
    up.handler = (_req, res) => sendJson(res, 200, openaiFixtures.completion('ok'));
    const mock = testConfig();
    gw = await startTestGateway(
      testConfig({
        providers: [
          ...mock.providers,
          { name: 'up', type: 'openai', api_base: `${up.url}/v1` },
          { name: 'mis', type: 'mistral', api_base: up.url },
        ],
        models: [
          ...mock.models,
          { id: 'up/openai', deployments: [{ provider: 'up', model: 'm' }] },
          { id: 'up/mistral', deployments: [{ provider: 'mis', model: 'mistral-small' }] },
          { id: 'up/strict', unsupported_params: 'reject', deployments: [{ provider: 'up', model: 'm' }] },
        ],
        plugins: ['params', 'routing'],
      }),
    );
  });
  after(async () => {
    await gw.stop();
    await up.stop();
  });

  it("drops what the model's provider does not accept (provider-specific ones too) and names it in X-Gateway-Dropped-Params", async () => {
    const res = await postJson(`${gw.url}/v1/chat/completions`, {
      model: 'up/openai',
      messages: [{ role: 'user', content: 'x' }],
      top_k: 5,
      repetition_penalty: 1.1,
      temperature: 0.2,
      safe_prompt: true,
    });
    expect(res.status).to.equal(200);
    // safe_prompt is Mistral's: the openai provider does not get it.
    expect(res.headers.get('x-gateway-dropped-params')).to.equal('top_k, repetition_penalty, safe_prompt');
    const sent = up.requests[up.requests.length - 1].json as Record<string, unknown>;
    expect(sent).to.include({ temperature: 0.2 });
    expect(sent).to.not.have.any.keys('top_k', 'repetition_penalty', 'safe_prompt');
  });

  it('a provider-specific parameter reaches the provider that declares it, unchanged', async () => {
    const res = await postJson(`${gw.url}/v1/chat/completions`, {
      model: 'up/mistral',
      messages: [{ role: 'user', content: 'x' }],
      safe_prompt: true,
      seed: 9,
    });
    expect(res.status).to.equal(200);
    expect(res.headers.get('x-gateway-dropped-params')).to.equal(null);
    expect(up.requests[up.requests.length - 1].json).to.deep.include({ safe_prompt: true, random_seed: 9 });
  });

  it('rejects instead when the model says so, or the request asks provider.require_parameters', async () => {
    const r1 = await postJson(`${gw.url}/v1/chat/completions`, {
      model: 'up/strict',
      messages: [{ role: 'user', content: 'x' }],
      top_k: 5,
    });
    expect(r1.status).to.equal(400);
    expect(((await r1.json()) as { error: { code: string; param: string } }).error).to.include({
      code: 'unsupported_parameter',
      param: 'top_k',
    });
    const r2 = await postJson(`${gw.url}/v1/chat/completions`, {
      model: 'up/openai',
      provider: { require_parameters: true },
      messages: [{ role: 'user', content: 'x' }],
      min_p: 0.1,
    });
    expect(r2.status).to.equal(400);
  });

  it('deprecated functions/function_call become tools/tool_choice, and the answer comes back as function_call', async () => {
    const client = sdkClient(gw, 'x');
    const c = await client.chat.completions.create({
      model: 'mock/gpt-4o-mini',
      functions: [
        {
          name: 'get_time',
          parameters: { type: 'object', properties: { zone: { type: 'string' } }, required: ['zone'] },
        },
      ],
      function_call: { name: 'get_time' },
      messages: [{ role: 'user', content: 'time?' }],
    });
    expect(c.choices[0].finish_reason).to.equal('function_call');
    expect(c.choices[0].message.function_call).to.deep.equal({ name: 'get_time', arguments: '{"zone":"mock zone"}' });
    expect(c.choices[0].message.tool_calls).to.equal(undefined);
    const stream = await client.chat.completions.create({
      model: 'mock/gpt-4o-mini',
      stream: true,
      functions: [{ name: 'get_time' }],
      function_call: { name: 'get_time' },
      messages: [{ role: 'user', content: 'time?' }],
    });
    let name = '';
    let finish: string | null = null;
    for await (const ch of stream) {
      name += ch.choices[0]?.delta.function_call?.name ?? '';
      expect(ch.choices[0]?.delta.tool_calls).to.equal(undefined);
      finish = ch.choices[0]?.finish_reason ?? finish;
    }
    expect(name).to.equal('get_time');
    expect(finish).to.equal('function_call');
    // and the upstream saw tools
    await postJson(`${gw.url}/v1/chat/completions`, {
      model: 'up/openai',
      functions: [{ name: 'f' }],
      function_call: 'auto',
      messages: [{ role: 'user', content: 'x' }],
    });
    const sent = up.requests[up.requests.length - 1].json as Record<string, unknown>;
    expect(sent.tools).to.deep.equal([{ type: 'function', function: { name: 'f' } }]);
    expect(sent.tool_choice).to.equal('auto');
    expect(sent).to.not.have.any.keys('functions', 'function_call');
  });
});
