import { expect } from 'chai';
import type { ServerResponse } from 'node:http';
import { postJson, startTestGateway, testConfig, type TestGateway } from '../helpers/gateway';
import { MockUpstream, openaiFixtures, sendJson, writeSse } from '../helpers/mock-upstream';
import { converseAnswer } from '../helpers/bedrock-fixtures';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../helpers/accounts';
import { fromNano } from '../../src/store/money';
import { sseData } from '../helpers/gateway';
import { anthropicEvent as ev, messageEnd, messageStart } from '../helpers/anthropic-sse';

// Distinct prices (credits per token): a wrong mapping of any token class changes the cost.
const pricing = {
  prompt: 0.000001,
  completion: 0.000002,
  cache_read: 0.0000001,
  cache_write: 0.00000125,
  reasoning: 0.000003,
};
const nano = { prompt: 1000, completion: 2000, cacheRead: 100, cacheWrite: 1250, reasoning: 3000 };

/** Token classes a provider's usage stands for: uncached input, cache reads, cache writes, plain output, reasoning output. */
interface Split {
  input: number;
  read: number;
  write: number;
  output: number;
  reasoning: number;
}
const costOf = (s: Split) =>
  s.input * nano.prompt +
  s.read * nano.cacheRead +
  s.write * nano.cacheWrite +
  s.output * nano.completion +
  s.reasoning * nano.reasoning;

const oaiBody = (usage: Record<string, unknown>) => ({ ...openaiFixtures.completion('ok'), usage });
const ndjsonDone = {
  model: 'qwen3',
  message: { role: 'assistant', content: 'ok', thinking: 'hmm' },
  done: true,
  done_reason: 'stop',
  prompt_eval_count: 12,
  eval_count: 30,
};

/** Per provider: its config, an answer in its own wire format with cache and reasoning usage, and what that usage means. */
const cases: Array<{
  type: string;
  extra?: Record<string, unknown>;
  model?: string;
  answer: (res: ServerResponse) => void;
  split: Split;
}> = [
  {
    type: 'openai',
    answer: (res) =>
      sendJson(
        res,
        200,
        oaiBody({
          prompt_tokens: 2006,
          completion_tokens: 300,
          total_tokens: 2306,
          prompt_tokens_details: { cached_tokens: 1920, cache_write_tokens: 40 },
          completion_tokens_details: { reasoning_tokens: 256 },
        }),
      ),
    split: { input: 46, read: 1920, write: 40, output: 44, reasoning: 256 },
  },
  {
    type: 'azure',
    answer: (res) =>
      sendJson(
        res,
        200,
        oaiBody({
          prompt_tokens: 1566,
          completion_tokens: 400,
          total_tokens: 1966,
          prompt_tokens_details: { cached_tokens: 1408, audio_tokens: 0 },
          completion_tokens_details: { reasoning_tokens: 320 },
        }),
      ),
    split: { input: 158, read: 1408, write: 0, output: 80, reasoning: 320 },
  },
  {
    type: 'mistral',
    answer: (res) =>
      sendJson(
        res,
        200,
        oaiBody({
          prompt_tokens: 500,
          completion_tokens: 60,
          total_tokens: 560,
          prompt_tokens_details: { cached_tokens: 400 },
        }),
      ),
    split: { input: 100, read: 400, write: 0, output: 60, reasoning: 0 },
  },
  {
    type: 'anthropic',
    answer: (res) =>
      sendJson(res, 200, {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude',
        content: [
          { type: 'thinking', thinking: 'hmm', signature: 'sig' },
          { type: 'text', text: 'ok' },
        ],
        stop_reason: 'end_turn',
        usage: { input_tokens: 21, cache_creation_input_tokens: 1800, cache_read_input_tokens: 300, output_tokens: 95 },
      }),
    // Anthropic bills thinking as output tokens and reports no separate count.
    split: { input: 21, read: 300, write: 1800, output: 95, reasoning: 0 },
  },
  {
    type: 'gemini',
    answer: (res) =>
      sendJson(res, 200, {
        candidates: [
          {
            content: { parts: [{ text: 'hmm', thought: true }, { text: 'ok' }], role: 'model' },
            finishReason: 'STOP',
            index: 0,
          },
        ],
        usageMetadata: {
          promptTokenCount: 1200,
          cachedContentTokenCount: 1000,
          candidatesTokenCount: 40,
          thoughtsTokenCount: 250,
          totalTokenCount: 1490,
        },
      }),
    split: { input: 200, read: 1000, write: 0, output: 40, reasoning: 250 },
  },
  {
    type: 'bedrock',
    extra: {
      api_key: undefined,
      options: { region: 'us-east-1', access_key_id: 'AKIDEXAMPLE', secret_access_key: 'secretEXAMPLE' },
    },
    answer: (res) =>
      sendJson(
        res,
        200,
        converseAnswer(
          [{ reasoningContent: { reasoningText: { text: 'hmm', signature: 's' } } }, { text: 'ok' }],
          'end_turn',
          {
            inputTokens: 20,
            outputTokens: 120,
            totalTokens: 2140,
            cacheReadInputTokens: 1500,
            cacheWriteInputTokens: 500,
          },
        ),
      ),
    split: { input: 20, read: 1500, write: 500, output: 120, reasoning: 0 },
  },
  {
    type: 'cohere',
    answer: (res) =>
      sendJson(res, 200, {
        id: 'c1',
        finish_reason: 'COMPLETE',
        message: { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
        usage: {
          billed_units: { input_tokens: 900, output_tokens: 80 },
          tokens: { input_tokens: 1100, output_tokens: 80 },
          cached_tokens: 600,
        },
      }),
    split: { input: 300, read: 600, write: 0, output: 80, reasoning: 0 },
  },
  {
    type: 'ollama',
    answer: (res) => sendJson(res, 200, ndjsonDone),
    split: { input: 12, read: 0, write: 0, output: 30, reasoning: 0 },
  },
];

describe('cost per provider: cache reads, cache writes and reasoning tokens at their own prices', () => {
  const ups = new Map<string, MockUpstream>();
  let gw: TestGateway;
  let key: string;
  before(async () => {
    for (const c of cases) ups.set(c.type, await new MockUpstream().start());
    const base = testConfig();
    gw = await startTestGateway(
      testConfig(
        {
          providers: [
            ...base.providers,
            ...cases.map((c) => ({
              name: `p-${c.type}`,
              type: c.type,
              api_base: ups.get(c.type)!.url,
              api_key: 'k',
              ...c.extra,
            })),
          ],
          models: [
            ...base.models,
            ...cases.map((c) => ({
              id: `c/${c.type}`,
              context_length: 100000,
              pricing,
              deployments: [{ provider: `p-${c.type}`, model: 'claude-model' }],
            })),
          ],
          plugins: ['auth', 'credit', 'routing'],
        },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
    key = (await makeAccountKey(gw, { credits: 1000 })).key;
  });
  after(async () => {
    await gw.stop();
    for (const u of ups.values()) await u.stop();
  });

  for (const c of cases) {
    it(`${c.type}: usage.cost and the generation record price each token class apart`, async () => {
      ups.get(c.type)!.enqueue((_r, res) => c.answer(res));
      const res = await postJson(
        `${gw.url}/v1/chat/completions`,
        { model: `c/${c.type}`, max_tokens: 1000, messages: [{ role: 'user', content: 'x' }] },
        { authorization: `Bearer ${key}` },
      );
      expect(res.status).to.equal(200);
      const body = (await res.json()) as { id: string; usage: { cost: number } };
      expect(body.usage.cost).to.equal(fromNano(costOf(c.split)));
      const g = await adminCall(gw, 'GET', `/v1/generation?id=${body.id}`);
      expect(g.body.data).to.deep.include({
        tokens_cached: c.split.read,
        tokens_cache_write: c.split.write,
        tokens_reasoning: c.split.reasoning,
        total_cost: fromNano(costOf(c.split)),
      });
    });
  }

  it('anthropic streamed: the usage chunk carries the same cost as a plain answer would', async () => {
    ups.get('anthropic')!.enqueue((_r, res) => {
      return writeSse(
        res,
        [
          messageStart(
            { input_tokens: 21, cache_creation_input_tokens: 1800, cache_read_input_tokens: 300 },
            'claude',
            'm',
          ),
          ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
          ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'ok' } }),
          ...messageEnd('end_turn', 95),
        ],
        { named: true },
      );
    });
    const res = await postJson(
      `${gw.url}/v1/chat/completions`,
      {
        model: 'c/anthropic',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'x' }],
      },
      { authorization: `Bearer ${key}` },
    );
    const frames = sseData(await res.text())
      .filter((f) => f !== '[DONE]')
      .map((f) => JSON.parse(f) as { usage?: { cost?: number } });
    expect(frames.find((f) => f.usage)?.usage?.cost).to.equal(
      fromNano(costOf({ input: 21, read: 300, write: 1800, output: 95, reasoning: 0 })),
    );
  });
});
