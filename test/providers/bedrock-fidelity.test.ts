import { expect } from 'chai';
import type { ServerResponse } from 'node:http';
import { sendJson } from '../helpers/mock-upstream';
import { converseAnswer } from '../helpers/bedrock-fixtures';
import { providerRig, weatherTool, type ProviderRig, lastSent } from '../helpers/provider-gateway';
import { encodeEventMessage } from '../../src/transport/aws-eventstream';
import { chat, chatStream } from './fidelity-helpers';

// Shapes from the Bedrock Converse API reference: CachePointBlock, ReasoningContentBlock,
// ReasoningContentBlockDelta, TokenUsage (cacheReadInputTokens / cacheWriteInputTokens).
const event = (type: string, payload: unknown) =>
  encodeEventMessage(
    { ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' },
    JSON.stringify(payload),
  );
const eventStream = (res: ServerResponse, events: Array<[string, unknown]>) => {
  res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
  for (const [t, p] of events) res.write(event(t, p));
  res.end();
};
const usage = {
  inputTokens: 20,
  outputTokens: 120,
  totalTokens: 2140,
  cacheReadInputTokens: 1500,
  cacheWriteInputTokens: 500,
};
const SIG = 'ErcBCkgIAhABGAIiQMr3';
const CACHE_POINT = { cachePoint: { type: 'default' } };

describe('provider: bedrock (cachePoint, reasoning content, cache usage)', () => {
  let rig: ProviderRig;
  let nova: ProviderRig;
  const creds = {
    api_key: undefined,
    options: { region: 'us-east-1', access_key_id: 'AKIDEXAMPLE', secret_access_key: 'secretEXAMPLE' },
  };
  before(async () => {
    rig = await providerRig('bedrock', creds, { model: 'us.anthropic.claude-sonnet-4-20250514-v1:0' });
    nova = await providerRig('bedrock', creds, { model: 'amazon.nova-2-lite-v1:0' });
  });
  after(async () => {
    await rig.stop();
    await nova.stop();
  });

  it('cache_control becomes a cachePoint after the block (system, messages, tools); usage counts cache reads and writes', async () => {
    rig.up.enqueue((_r, res) => sendJson(res, 200, converseAnswer([{ text: 'ok' }], 'end_turn', usage)));
    const r = await chat(rig, {
      tools: [{ ...weatherTool, cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'LONG MANUAL', cache_control: { type: 'ephemeral' } }] },
        { role: 'user', content: 'question', cache_control: { type: 'ephemeral' } },
      ],
    });
    const sent = lastSent(rig);
    expect(sent.system).to.deep.equal([{ text: 'LONG MANUAL' }, CACHE_POINT]);
    expect(sent.messages).to.deep.equal([{ role: 'user', content: [{ text: 'question' }, CACHE_POINT] }]);
    expect((sent.toolConfig as { tools: unknown[] }).tools[1]).to.deep.equal(CACHE_POINT);
    expect(r.json.usage).to.deep.equal({
      prompt_tokens: 2020,
      completion_tokens: 120,
      total_tokens: 2140,
      prompt_tokens_details: { cached_tokens: 1500, cache_write_tokens: 500 },
    });
  });

  it("reasoning maps to the model's own fields: Claude thinking.budget_tokens (maxTokens above it), Nova reasoningConfig", async () => {
    rig.up.enqueue((_r, res) => sendJson(res, 200, converseAnswer([{ text: 'ok' }], 'end_turn', usage)));
    await chat(rig, {
      max_tokens: 1000,
      temperature: 0.2,
      reasoning: { max_tokens: 2000 },
      messages: [{ role: 'user', content: 'x' }],
    });
    const sent = lastSent(rig);
    expect(sent.additionalModelRequestFields).to.deep.equal({ thinking: { type: 'enabled', budget_tokens: 2000 } });
    expect(sent.inferenceConfig).to.deep.equal({ maxTokens: 3000 });
    nova.up.enqueue((_r, res) => sendJson(res, 200, converseAnswer([{ text: 'ok' }], 'end_turn', usage)));
    await chat(nova, { reasoning_effort: 'high', messages: [{ role: 'user', content: 'x' }] });
    expect(lastSent(nova).additionalModelRequestFields).to.deep.equal({
      reasoningConfig: { type: 'enabled', maxReasoningEffort: 'high' },
    });
  });

  it('reasoningContent blocks come back as reasoning and reasoning_details (plain), and go back unchanged on the next turn', async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(
        res,
        200,
        converseAnswer(
          [
            { reasoningContent: { reasoningText: { text: 'Weather needs a tool.', signature: SIG } } },
            { toolUse: { toolUseId: 'tu1', name: 'get_weather', input: { city: 'Paris' } } },
          ],
          'tool_use',
          usage,
        ),
      ),
    );
    const r = await chat(rig, {
      reasoning_effort: 'low',
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'weather?' }],
    });
    const m = r.json.choices[0].message;
    expect(m.reasoning).to.equal('Weather needs a tool.');
    expect(m.reasoning_details).to.deep.equal([
      {
        type: 'reasoning.text',
        text: 'Weather needs a tool.',
        signature: SIG,
        format: 'bedrock-converse-v1',
        index: 0,
      },
    ]);
    rig.up.enqueue((_r, res) => sendJson(res, 200, converseAnswer([{ text: '18C' }], 'end_turn', usage)));
    await chat(rig, {
      reasoning_effort: 'low',
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'weather?' }, m, { role: 'tool', tool_call_id: 'tu1', content: '18C' }],
    });
    expect((lastSent(rig).messages as unknown[])[1]).to.deep.equal({
      role: 'assistant',
      content: [
        { reasoningContent: { reasoningText: { text: 'Weather needs a tool.', signature: SIG } } },
        { toolUse: { toolUseId: 'tu1', name: 'get_weather', input: { city: 'Paris' } } },
      ],
    });
  });

  it('streams reasoningContent deltas (text, then signature) and usage with cache reads and writes', async () => {
    rig.up.enqueue((_r, res) =>
      eventStream(res, [
        ['messageStart', { role: 'assistant' }],
        ['contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'Let me ' } } }],
        ['contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'think.' } } }],
        ['contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { signature: SIG } } }],
        ['contentBlockStop', { contentBlockIndex: 0 }],
        ['contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'Done.' } }],
        ['contentBlockStop', { contentBlockIndex: 1 }],
        ['messageStop', { stopReason: 'end_turn' }],
        ['metadata', { usage, metrics: { latencyMs: 900 } }],
      ]),
    );
    const s = await chatStream(rig, { reasoning_effort: 'low', messages: [{ role: 'user', content: 'x' }] });
    expect(s.reasoning).to.equal('Let me think.');
    expect(s.details).to.deep.equal([
      { type: 'reasoning.text', text: 'Let me think.', signature: SIG, format: 'bedrock-converse-v1', index: 0 },
    ]);
    expect(s.text).to.equal('Done.');
    expect(s.usage).to.deep.equal({
      prompt_tokens: 2020,
      completion_tokens: 120,
      total_tokens: 2140,
      prompt_tokens_details: { cached_tokens: 1500, cache_write_tokens: 500 },
    });
  });
});
