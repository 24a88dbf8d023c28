import { expect } from 'chai';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { MockUpstream, sendJson, writeSse } from '../helpers/mock-upstream';
import { operationsConfig } from './helpers';
import { keyedClient } from '../helpers/sdk';

type Json = Record<string, unknown>;

const weather = {
  type: 'function' as const,
  name: 'get_weather',
  strict: false,
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const usage = { input_tokens: 20, output_tokens: 15 };

/** An Anthropic Messages stream (shapes from Anthropic's streaming docs): thinking with its signature, a tool_use. */
function claudeThinksThenCalls() {
  const ev = (event: string, data: Json) => ({ event, data: { type: event, ...data } });
  return [
    ev('message_start', {
      message: { id: 'msg_1', type: 'message', role: 'assistant', content: [], model: 'claude', usage },
    }),
    ev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }),
    ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Paris weather: ' } }),
    ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'call the tool.' } }),
    ev('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'sig-claude-1' } }),
    ev('content_block_stop', { index: 0 }),
    ev('content_block_start', {
      index: 1,
      content_block: { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} },
    }),
    ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":"Paris"}' } }),
    ev('content_block_stop', { index: 1 }),
    ev('message_delta', { delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 15 } }),
    ev('message_stop', {}),
  ];
}

const claudeText = (text: string) => ({
  id: 'msg_2',
  type: 'message',
  role: 'assistant',
  model: 'claude',
  content: [{ type: 'text', text }],
  stop_reason: 'end_turn',
  usage,
});

/** The assistant turn and tool result the provider must get back on the tool turn. */
const claudeToolTurn = [
  {
    role: 'assistant',
    content: [
      { type: 'thinking', thinking: 'Paris weather: call the tool.', signature: 'sig-claude-1' },
      { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
    ],
  },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '21 C' }] },
];

describe('/v1/responses: reasoning round-trips to Anthropic and Gemini (issue 45)', () => {
  let claude: MockUpstream;
  let gemini: MockUpstream;
  let gw: TestGateway;
  let client: OpenAI;
  before(async () => {
    claude = await new MockUpstream().start();
    gemini = await new MockUpstream().start();
    const pricing = { prompt: 0.000001, completion: 0.000002 };
    gw = await startTestGateway(
      operationsConfig({
        providers: [
          { name: 'anthropic', type: 'anthropic', api_base: claude.url, api_key: 'k' },
          { name: 'gemini', type: 'gemini', api_base: gemini.url, api_key: 'k' },
        ],
        models: [
          {
            id: 'a/claude',
            pricing,
            context_length: 200000,
            deployments: [{ provider: 'anthropic', model: 'claude' }],
          },
          { id: 'g/gemini', pricing, context_length: 200000, deployments: [{ provider: 'gemini', model: 'gemini' }] },
        ],
      }),
    );
    ({ client } = await keyedClient(gw, { credits: 5 }));
  });
  after(async () => {
    await gw.stop();
    await claude.stop();
    await gemini.stop();
  });

  it('Anthropic, streamed, store false, the items resent (as Codex does): the thinking signature goes back', async () => {
    claude.enqueue((_req, res) => writeSse(res, claudeThinksThenCalls(), { named: true }));
    const first = client.responses.stream({
      model: 'a/claude',
      input: 'Weather in Paris?',
      tools: [weather],
      reasoning: { effort: 'low', summary: 'auto' },
      include: ['reasoning.encrypted_content'],
      store: false,
    });
    const done: Json[] = [];
    first.on('response.output_item.done', (e) => done.push(e.item as unknown as Json));
    const r1 = await first.finalResponse();
    expect(done.map((i) => i.type)).to.deep.equal(['reasoning', 'function_call']);
    const reasoning = done[0] as { summary: Json[]; encrypted_content: string; content?: unknown };
    expect(reasoning.summary).to.deep.equal([{ type: 'summary_text', text: 'Paris weather: call the tool.' }]);
    expect(reasoning.encrypted_content).to.be.a('string').and.not.include('sig-claude-1');
    expect(r1.output[0]).to.deep.equal(done[0]);

    claude.enqueue((_req, res) => sendJson(res, 200, claudeText('21 C in Paris.')));
    const r2 = await client.responses.create({
      model: 'a/claude',
      tools: [weather],
      reasoning: { effort: 'low', summary: 'auto' },
      include: ['reasoning.encrypted_content'],
      store: false,
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        ...(r1.output as unknown as OpenAI.Responses.ResponseInputItem[]),
        { type: 'function_call_output', call_id: 'toolu_1', output: '21 C' },
      ],
    });
    expect(r2.output_text).to.equal('21 C in Paris.');
    const sent = claude.requests[claude.requests.length - 1].json as { messages: Json[] };
    expect(sent.messages.slice(1)).to.deep.equal(claudeToolTurn);
  });

  it('Anthropic, plain, previous_response_id: the stored reasoning item carries the signature into the tool turn', async () => {
    claude.enqueue((_req, res) =>
      sendJson(res, 200, {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude',
        content: [
          { type: 'thinking', thinking: 'Paris weather: call the tool.', signature: 'sig-claude-1' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
        ],
        stop_reason: 'tool_use',
        usage,
      }),
    );
    const r1 = await client.responses.create({
      model: 'a/claude',
      input: 'Weather in Paris?',
      tools: [weather],
      reasoning: { effort: 'low' },
    });
    expect(r1.output.map((o) => o.type)).to.deep.equal(['reasoning', 'function_call']);
    expect(r1.output[0]).to.deep.include({
      content: [{ type: 'reasoning_text', text: 'Paris weather: call the tool.' }],
    });
    claude.enqueue((_req, res) => sendJson(res, 200, claudeText('21 C in Paris.')));
    const r2 = await client.responses.create({
      model: 'a/claude',
      tools: [weather],
      reasoning: { effort: 'low' },
      previous_response_id: r1.id,
      input: [{ type: 'function_call_output', call_id: 'toolu_1', output: '21 C' }],
    });
    expect(r2.output_text).to.equal('21 C in Paris.');
    const sent = claude.requests[claude.requests.length - 1].json as { messages: Json[] };
    expect(sent.messages.slice(1)).to.deep.equal(claudeToolTurn);
  });

  it("Gemini: a function call's thought signature goes back on that call", async () => {
    gemini.enqueue((_req, res) =>
      sendJson(res, 200, {
        candidates: [
          {
            content: {
              role: 'model',
              parts: [
                { text: 'Need the weather tool.', thought: true },
                { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'sig-gemini-1' },
              ],
            },
            finishReason: 'STOP',
          },
        ],
        usageMetadata: { promptTokenCount: 20, candidatesTokenCount: 10, totalTokenCount: 30 },
      }),
    );
    const r1 = await client.responses.create({
      model: 'g/gemini',
      input: 'Weather in Paris?',
      tools: [weather],
      reasoning: { effort: 'low' },
      store: false,
    });
    expect(r1.output.map((o) => o.type)).to.deep.equal(['reasoning', 'function_call']);
    const call = r1.output[1] as OpenAI.Responses.ResponseFunctionToolCall;
    gemini.enqueue((_req, res) =>
      sendJson(res, 200, {
        candidates: [{ content: { role: 'model', parts: [{ text: '21 C.' }] }, finishReason: 'STOP' }],
        usageMetadata: { promptTokenCount: 30, candidatesTokenCount: 3, totalTokenCount: 33 },
      }),
    );
    const r2 = await client.responses.create({
      model: 'g/gemini',
      tools: [weather],
      reasoning: { effort: 'low' },
      store: false,
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        ...(r1.output as unknown as OpenAI.Responses.ResponseInputItem[]),
        { type: 'function_call_output', call_id: call.call_id, output: '21 C' },
      ],
    });
    expect(r2.output_text).to.equal('21 C.');
    const sent = gemini.requests[gemini.requests.length - 1].json as {
      contents: Array<{ role: string; parts: Json[] }>;
    };
    const model = sent.contents.find((c) => c.role === 'model');
    expect(model?.parts).to.deep.include({
      functionCall: { name: 'get_weather', args: { city: 'Paris' } },
      thoughtSignature: 'sig-gemini-1',
    });
  });
});
