import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { startTestGateway, postJson, type TestGateway } from '../helpers/gateway';
import { MockUpstream, openaiFixtures, sendJson, writeSse } from '../helpers/mock-upstream';
import { operationsConfig } from './helpers';
import { keyedClient } from '../helpers/sdk';

type Json = Record<string, unknown>;
type Sent = { messages: Json[]; tools?: Array<{ type: string; function: Json }>; [k: string]: unknown };

/** Request bodies Codex CLI 0.171.0 sent (captured from `codex exec`, see codex-cli.test.ts). */
const fixture = (name: string): Json => JSON.parse(readFileSync(join(__dirname, 'fixtures', name), 'utf8')) as Json;

/** A plain chat answer calling one tool. */
function callAnswer(id: string, name: string, args: string) {
  const c = openaiFixtures.completion('');
  return {
    ...c,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: null,
          tool_calls: [{ id, type: 'function', function: { name, arguments: args } }],
        },
        finish_reason: 'tool_calls',
      },
    ],
  };
}

const PATCH = '*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch\n';

describe('/v1/responses accepts what OpenAI accepts (issue 45): fields, custom and namespace tools', () => {
  let up: MockUpstream;
  let gw: TestGateway;
  let client: OpenAI;
  let key: string;
  before(async () => {
    up = await new MockUpstream().start();
    gw = await startTestGateway(
      operationsConfig({
        providers: [{ name: 'up', type: 'openai', api_base: `${up.url}/v1` }],
        models: [
          {
            id: 'up/m',
            pricing: { prompt: 0.000001, completion: 0.000002 },
            context_length: 128000,
            deployments: [{ provider: 'up', model: 'gpt-up' }],
          },
        ],
      }),
    );
    ({ key, client } = await keyedClient(gw, { credits: 5 }));
  });
  after(async () => {
    await gw.stop();
    await up.stop();
  });
  const last = () => up.requests[up.requests.length - 1].json as Sent;
  const post = (body: Json) => postJson(`${gw.url}/v1/responses`, body, { authorization: `Bearer ${key}` });

  it("Codex's first request: custom, hosted and client fields are mapped or dropped and named, never a 400", async () => {
    up.enqueue((_req, res) =>
      writeSse(res, [
        openaiFixtures.chunk({ role: 'assistant', content: 'Hi' }),
        openaiFixtures.chunk({}, 'stop'),
        openaiFixtures.usageChunk(900, 1),
      ]),
    );
    const body = { ...fixture('codex-0.171.0-first-turn.json'), model: 'up/m' };
    const r = await post(body);
    expect(r.status).to.equal(200);
    const text = await r.text();
    expect(text).to.include('event: response.completed');
    const dropped = (r.headers.get('x-gateway-dropped-params') ?? '').split(', ');
    expect(dropped).to.include.members([
      'prompt_cache_key',
      'client_metadata',
      'tools[tool_search]',
      'tools[web_search]',
    ]);
    const sent = last();
    // developer messages, in order, reach the model as they were sent.
    expect(sent.messages.map((m) => m.role)).to.deep.equal(['developer', 'developer', 'user', 'user']);
    const names = (sent.tools ?? []).map((t) => t.function.name);
    expect(names).to.include.members(['exec_command', 'apply_patch', 'view_image']);
    expect(names).to.not.include('web_search');
    const patch = (sent.tools ?? []).find((t) => t.function.name === 'apply_patch')?.function as Json;
    expect(patch.parameters).to.deep.equal({
      type: 'object',
      properties: { input: { type: 'string', description: 'The tool input, as free text.' } },
      required: ['input'],
      additionalProperties: false,
    });
    expect(patch.description).to.include('*** Begin Patch').and.include('lark grammar');
    expect(sent).to.not.have.any.keys('client_metadata', 'prompt_cache_key', 'include', 'store');
  });

  it("Codex's namespace tools are flattened for the model; the call comes back under the declared name", async () => {
    const body: Json = { ...fixture('codex-0.171.0-no-catalog.json'), model: 'up/m', stream: false };
    up.enqueue((_req, res) =>
      sendJson(res, 200, callAnswer('call_ns', 'multi_agent_v1__close_agent', '{"target":"a1"}')),
    );
    const r = await post(body);
    expect(r.status).to.equal(200);
    const names = (last().tools ?? []).map((t) => t.function.name);
    expect(names).to.include('multi_agent_v1__close_agent');
    const out = ((await r.json()) as { output: Json[] }).output;
    expect(out).to.have.length(1);
    expect(out[0]).to.include({
      type: 'function_call',
      call_id: 'call_ns',
      name: 'close_agent',
      namespace: 'multi_agent_v1',
      arguments: '{"target":"a1"}',
    });
    // Sent back, the call reaches the model under the flat name again.
    up.enqueue((_req, res) => sendJson(res, 200, openaiFixtures.completion('closed')));
    const again = await post({
      ...body,
      input: [
        ...(body.input as Json[]),
        {
          type: 'function_call',
          call_id: 'call_ns',
          name: 'close_agent',
          namespace: 'multi_agent_v1',
          arguments: '{}',
        },
        { type: 'function_call_output', call_id: 'call_ns', output: 'ok' },
      ],
    });
    expect(again.status).to.equal(200);
    const msgs = last().messages;
    expect(msgs[msgs.length - 2]).to.deep.include({
      role: 'assistant',
      tool_calls: [
        { id: 'call_ns', type: 'function', function: { name: 'multi_agent_v1__close_agent', arguments: '{}' } },
      ],
    });
    expect(msgs[msgs.length - 1]).to.deep.equal({ role: 'tool', tool_call_id: 'call_ns', content: 'ok' });
  });

  const patchTool = {
    type: 'custom' as const,
    name: 'apply_patch',
    description: 'Edit files.',
    format: { type: 'grammar' as const, syntax: 'lark' as const, definition: 'start: /.+/s' },
  };

  it('a custom tool call comes back as custom_tool_call (plain), and its output goes back as a tool result', async () => {
    up.enqueue((_req, res) =>
      sendJson(res, 200, callAnswer('call_p', 'apply_patch', JSON.stringify({ input: PATCH }))),
    );
    const r = await client.responses.create({ model: 'up/m', input: 'add hello.txt', tools: [patchTool] });
    expect(r.output).to.have.length(1);
    expect(r.output[0]).to.deep.include({
      type: 'custom_tool_call',
      call_id: 'call_p',
      name: 'apply_patch',
      input: PATCH,
      status: 'completed',
    });
    up.enqueue((_req, res) => sendJson(res, 200, openaiFixtures.completion('Done.')));
    const next = await client.responses.create({
      model: 'up/m',
      tools: [patchTool],
      input: [
        { role: 'user', content: 'add hello.txt' },
        { type: 'custom_tool_call', call_id: 'call_p', name: 'apply_patch', input: PATCH },
        { type: 'custom_tool_call_output', call_id: 'call_p', output: 'Success. Updated: A hello.txt' },
      ],
    });
    expect(next.output_text).to.equal('Done.');
    expect(last().messages.slice(1)).to.deep.equal([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_p',
            type: 'function',
            function: { name: 'apply_patch', arguments: JSON.stringify({ input: PATCH }) },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_p', content: 'Success. Updated: A hello.txt' },
    ]);
  });

  it('a custom tool call streams as custom_tool_call items and custom_tool_call_input events', async () => {
    const args = JSON.stringify({ input: PATCH });
    up.enqueue((_req, res) =>
      writeSse(res, [
        openaiFixtures.chunk({
          role: 'assistant',
          tool_calls: [{ index: 0, id: 'call_s', type: 'function', function: { name: 'apply_patch', arguments: '' } }],
        }),
        openaiFixtures.chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(0, 20) } }] }),
        openaiFixtures.chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(20) } }] }),
        openaiFixtures.chunk({}, 'tool_calls'),
        openaiFixtures.usageChunk(30, 20),
      ]),
    );
    const stream = await client.responses.create({ model: 'up/m', input: 'patch', tools: [patchTool], stream: true });
    const events: Json[] = [];
    for await (const ev of stream) events.push(ev as unknown as Json);
    const types = events.map((e) => e.type);
    expect(types.slice(2)).to.deep.equal([
      'response.output_item.added',
      'response.custom_tool_call_input.delta',
      'response.custom_tool_call_input.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(types).to.not.include('response.function_call_arguments.delta');
    const added = events.find((e) => e.type === 'response.output_item.added') as { item: Json };
    expect(added.item).to.include({ type: 'custom_tool_call', call_id: 'call_s', name: 'apply_patch' });
    const done = events.find((e) => e.type === 'response.custom_tool_call_input.done') as Json;
    expect(done.input).to.equal(PATCH);
    const item = (events.find((e) => e.type === 'response.output_item.done') as { item: Json }).item;
    expect(item).to.include({ type: 'custom_tool_call', input: PATCH, status: 'completed' });
    const final = (events[events.length - 1] as { response: { output: Json[] } }).response;
    expect(final.output).to.deep.equal([item]);
  });

  it('refuses only what matters: background, conversation, prompt templates, each saying why', async () => {
    const before = up.requests.length;
    const r = await post({
      model: 'up/m',
      input: 'x',
      background: true,
      conversation: 'conv_1',
      prompt: { id: 'pmpt_1' },
    });
    expect(r.status).to.equal(400);
    const e = ((await r.json()) as { error: { message: string; code: string } }).error;
    expect(e.code).to.equal('unsupported_parameter');
    expect(e.message)
      .to.include('background responses are not supported')
      .and.include('conversation is not supported')
      .and.include('previous_response_id')
      .and.include('prompt templates are not supported');
    // Their defaults ask for nothing: no 400.
    up.enqueue((_req, res) => sendJson(res, 200, openaiFixtures.completion('ok')));
    const fine = await post({ model: 'up/m', input: 'x', background: false, conversation: null, prompt: null });
    expect(fine.status).to.equal(200);
    expect(fine.headers.get('x-gateway-dropped-params')).to.equal(null);
    expect(up.requests.length).to.equal(before + 1);
  });

  it('ignored fields are named: unknown ones, include values, truncation, safety_identifier, max_tool_calls', async () => {
    up.enqueue((_req, res) => sendJson(res, 200, openaiFixtures.completion('ok')));
    const r = await post({
      model: 'up/m',
      input: [
        { role: 'developer', content: 'Be terse.' },
        { role: 'user', content: 'x' },
      ],
      include: ['reasoning.encrypted_content', 'message.output_text.logprobs'],
      truncation: 'auto',
      safety_identifier: 'u-1',
      max_tool_calls: 3,
      context_management: [{ type: 'compaction' }],
      prompt_cache_retention: '24h',
      some_future_field: { a: 1 },
      tools: [{ type: 'web_search_preview' }, { type: 'code_interpreter', container: { type: 'auto' } }],
      tool_choice: 'auto',
    });
    expect(r.status).to.equal(200);
    expect((r.headers.get('x-gateway-dropped-params') ?? '').split(', ')).to.have.members([
      'include[message.output_text.logprobs]',
      'truncation',
      'safety_identifier',
      'max_tool_calls',
      'context_management',
      'prompt_cache_retention',
      'some_future_field',
      'tools[web_search_preview]',
      'tools[code_interpreter]',
    ]);
    const sent = last();
    expect(sent.messages).to.deep.equal([
      { role: 'developer', content: 'Be terse.' },
      { role: 'user', content: 'x' },
    ]);
    expect(sent).to.not.have.any.keys('tools', 'tool_choice');
  });

  it('an input_image data URL reaches the model as an image part', async () => {
    const url =
      'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    up.enqueue((_req, res) => sendJson(res, 200, openaiFixtures.completion('a pixel')));
    const r = await client.responses.create({
      model: 'up/m',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'what is this?' },
            { type: 'input_image', image_url: url, detail: 'auto' },
          ],
        },
      ],
    });
    expect(r.output_text).to.equal('a pixel');
    expect(last().messages[0].content).to.deep.equal([
      { type: 'text', text: 'what is this?' },
      { type: 'image_url', image_url: { url, detail: 'auto' } },
    ]);
  });
});
