import { expect } from 'chai';
import { postJson, startTestGateway, testConfig, type TestGateway } from '../helpers/gateway';
import { MockUpstream, openaiFixtures, sendJson } from '../helpers/mock-upstream';
import { weatherTool } from '../helpers/provider-gateway';
import { sdkClient } from '../helpers/sdk';

const call = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };

describe('request fidelity through the params plugin (calls without content, dropped fields named)', () => {
  let up: MockUpstream;
  let gw: TestGateway;
  before(async () => {
    up = await new MockUpstream().start();
    up.handler = (req, res) => {
      if (req.path === '/v1/messages')
        return sendJson(res, 200, {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: 'claude',
          content: [{ type: 'text', text: 'ok' }],
          stop_reason: 'end_turn',
          usage: { input_tokens: 3, output_tokens: 1 },
        });
      if (req.path === '/api/chat')
        return sendJson(res, 200, {
          model: 'qwen3',
          message: { role: 'assistant', content: 'ok' },
          done: true,
          done_reason: 'stop',
          prompt_eval_count: 3,
          eval_count: 1,
        });
      return sendJson(res, 200, openaiFixtures.completion('ok'));
    };
    const base = testConfig();
    gw = await startTestGateway(
      testConfig({
        providers: [
          ...base.providers,
          { name: 'oai', type: 'openai', api_base: `${up.url}/v1` },
          { name: 'claude', type: 'anthropic', api_base: up.url, api_key: 'k' },
          { name: 'local', type: 'ollama', api_base: up.url },
          { name: 'mis', type: 'mistral', api_base: up.url, api_key: 'k' },
        ],
        models: [
          ...base.models,
          { id: 'x/openai', deployments: [{ provider: 'oai', model: 'gpt' }] },
          { id: 'x/claude', deployments: [{ provider: 'claude', model: 'claude' }] },
          { id: 'x/ollama', deployments: [{ provider: 'local', model: 'qwen3' }] },
          { id: 'x/mistral', deployments: [{ provider: 'mis', model: 'mistral-small' }] },
        ],
        plugins: ['params', 'routing'],
      }),
    );
  });
  after(async () => {
    await gw.stop();
    await up.stop();
  });
  const post = (body: Record<string, unknown>) => postJson(`${gw.url}/v1/chat/completions`, body);

  it("accepts an assistant message with tool_calls and no content key (Python's exclude_none) and still requires content elsewhere", async () => {
    const messages = [
      { role: 'user', content: 'weather?' },
      { role: 'assistant', tool_calls: [call] },
      { role: 'tool', tool_call_id: 'call_1', content: '18C' },
    ];
    for (const model of ['mock/gpt-4o-mini', 'x/claude', 'x/mistral']) {
      const res = await post({ model, tools: [weatherTool], messages });
      expect(res.status, model).to.equal(200);
    }
    const client = sdkClient(gw, 'x');
    const c = await client.chat.completions.create({
      model: 'x/openai',
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'w?' },
        {
          role: 'assistant',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '18C' },
      ],
    });
    expect(c.choices[0].message.content).to.equal('ok');
    for (const bad of [{ role: 'assistant' }, { role: 'user' }]) {
      const res = await post({ model: 'mock/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }, bad] });
      expect(res.status).to.equal(400);
      expect(((await res.json()) as { error: { param: string; code: string } }).error).to.include({
        param: 'messages[1].content',
        code: 'missing_field',
      });
    }
  });

  it('a body field no adapter knows is forwarded to an OpenAI-compatible upstream, and dropped and named for one that would leave it out', async () => {
    let res = await post({ model: 'x/openai', messages: [{ role: 'user', content: 'x' }], my_custom_flag: true });
    expect(res.headers.get('x-gateway-dropped-params')).to.equal(null);
    expect(up.requests[up.requests.length - 1].json).to.deep.include({ my_custom_flag: true });
    for (const model of ['x/claude', 'x/ollama', 'x/mistral', 'mock/gpt-4o-mini']) {
      res = await post({ model, messages: [{ role: 'user', content: 'x' }], my_custom_flag: true });
      expect(res.status, model).to.equal(200);
      expect(res.headers.get('x-gateway-dropped-params'), model).to.equal('my_custom_flag');
    }
  });

  it("Ollama's tool_choice required or forced is named as dropped (auto is not); reasoning is named for a provider without it", async () => {
    let res = await post({
      model: 'x/ollama',
      tools: [weatherTool],
      tool_choice: 'required',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(res.headers.get('x-gateway-dropped-params')).to.equal('tool_choice');
    res = await post({
      model: 'x/ollama',
      tools: [weatherTool],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(res.headers.get('x-gateway-dropped-params')).to.equal('tool_choice');
    res = await post({
      model: 'x/ollama',
      tools: [weatherTool],
      tool_choice: 'auto',
      reasoning_effort: 'low',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(res.headers.get('x-gateway-dropped-params')).to.equal(null);
    res = await post({ model: 'x/mistral', reasoning: { effort: 'low' }, messages: [{ role: 'user', content: 'x' }] });
    expect(res.headers.get('x-gateway-dropped-params')).to.equal('reasoning');
  });

  it('reasoning_effort and reasoning are validated (400 naming the field)', async () => {
    let res = await post({
      model: 'x/claude',
      reasoning_effort: 'extreme',
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(res.status).to.equal(400);
    expect(((await res.json()) as { error: { param: string } }).error.param).to.equal('reasoning_effort');
    res = await post({ model: 'x/claude', reasoning: { max_tokens: -1 }, messages: [{ role: 'user', content: 'x' }] });
    expect(res.status).to.equal(400);
    expect(((await res.json()) as { error: { param: string } }).error.param).to.equal('reasoning.max_tokens');
  });
});
