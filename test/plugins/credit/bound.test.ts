import { expect } from 'chai';
import fc from 'fast-check';
import { maxRequestTokens, requestTokenBound } from '../../../src/tokens/bound';
import type { ModelConfig } from '../../../src/config/types';
import type { ChatRequest } from '../../../src/types/openai';
import type { UpstreamTarget } from '../../../src/providers/types';
import { anthropicBody } from '../../../src/providers/anthropic/request';
import { converseBody } from '../../../src/providers/bedrock/index';

const model = (context_length: number): ModelConfig => ({
  id: 'm',
  owned_by: 'x',
  created: 0,
  context_length,
  pricing: { prompt: 1, completion: 1 },
  deployments: [],
});

describe('credit bound (pure)', () => {
  it('is never below one token per UTF-8 byte plus OpenAI chat framing, for any text (CJK, Thai, emoji, combining marks)', () => {
    const text = fc.string({ unit: 'binary', maxLength: 200 });
    fc.assert(
      fc.property(
        fc.array(fc.record({ role: fc.constantFrom('system', 'user', 'assistant'), content: text }), {
          minLength: 1,
          maxLength: 6,
        }),
        (messages) => {
          const req = { model: 'm', messages } as ChatRequest;
          const floor = 3 + messages.reduce((s, m) => s + 4 + Buffer.byteLength(m.content, 'utf8'), 0);
          const b = requestTokenBound(req, model(1_000_000), 'openai');
          return b.input >= floor && b.unbounded === null;
        },
      ),
      { numRuns: 300 },
    );
  });

  it('never exceeds the context length for the prompt, and maxRequestTokens covers every choice', () => {
    const req = {
      model: 'm',
      n: 4,
      max_tokens: 100,
      messages: [{ role: 'user', content: 'x'.repeat(5000) }],
    } as ChatRequest;
    expect(requestTokenBound(req, model(1000), 'openai').input).to.equal(1000);
    // p + c <= 1000 per choice: the worst split is p = 900, c = 100 for each of 4 choices.
    expect(maxRequestTokens(req, model(1000), 'openai')).to.equal(900 + 4 * 100);
    expect(
      maxRequestTokens({ ...req, messages: [{ role: 'user', content: 'hi' }] }, model(100_000), 'openai'),
    ).to.be.within(400, 500);
  });

  it('an item without a known maximum makes the prompt bound the context length and names the item', () => {
    const req = {
      model: 'm',
      messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'f' } }] }],
    } as ChatRequest;
    const b = requestTokenBound(req, model(50_000), 'openai');
    expect(b).to.include({ input: 50_000, unbounded: 'messages[0].content[0]' });
    expect(
      requestTokenBound(req, { ...model(50_000), credit_bound: { file_tokens: 700 } }, 'openai').unbounded,
    ).to.equal(null);
  });
});

describe('credit bound: the output the adapter sends (reasoning included)', () => {
  const req = fc.record(
    {
      max_tokens: fc.integer({ min: 1, max: 70_000 }),
      max_completion_tokens: fc.integer({ min: 1, max: 70_000 }),
      reasoning_effort: fc.constantFrom('none', 'minimal', 'low', 'medium', 'high', 'xhigh'),
      reasoning: fc.record(
        {
          effort: fc.constantFrom('low', 'medium', 'high'),
          max_tokens: fc.integer({ min: 0, max: 70_000 }),
          enabled: fc.boolean(),
        },
        { requiredKeys: [] },
      ),
    },
    { requiredKeys: [] },
  );
  const defaultMax = fc.option(fc.integer({ min: 1, max: 70_000 }), { nil: undefined });
  const target = (type: string, model: string, max: number | undefined) =>
    ({
      provider: { name: 'p', type, options: {} },
      deployment: { provider: 'p', model, options: max === undefined ? {} : { max_tokens: max } },
    }) as unknown as UpstreamTarget;

  it('covers the max_tokens the Anthropic adapter sends, thinking budget and defaults included', () => {
    fc.assert(
      fc.property(req, defaultMax, (r, max) => {
        const request = { model: 'm', messages: [{ role: 'user', content: 'hi' }], ...r } as ChatRequest;
        const t = target('anthropic', 'claude', max);
        const sent = Number(anthropicBody(request, t, false).max_tokens);
        return requestTokenBound(request, model(1_000_000), 'anthropic', {}, t).output >= sent;
      }),
      { numRuns: 500 },
    );
  });

  it('covers the maxTokens the Bedrock adapter sends to a Claude model with thinking', () => {
    fc.assert(
      fc.property(req, (r) => {
        const request = { model: 'm', messages: [{ role: 'user', content: 'hi' }], ...r } as ChatRequest;
        const t = target('bedrock', 'anthropic.claude-sonnet', undefined);
        const sent = (
          converseBody(request, 'anthropic.claude-sonnet').inferenceConfig as { maxTokens?: number } | undefined
        )?.maxTokens;
        const b = requestTokenBound(request, model(1_000_000), 'bedrock', {}, t);
        return sent === undefined ? b.output === 1_000_000 : b.output >= sent;
      }),
      { numRuns: 500 },
    );
  });

  it('is capped at the context length and ignores an option that is not a number', () => {
    const request = {
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 50,
      reasoning_effort: 'low',
    } as ChatRequest;
    expect(requestTokenBound(request, model(100_000), 'anthropic').output).to.equal(1074);
    expect(requestTokenBound(request, model(1000), 'anthropic').output).to.equal(1000);
    expect(requestTokenBound(request, model(100_000), 'openai').output).to.equal(50);
    // Cohere: an explicit thinking budget on top of max_tokens.
    expect(
      requestTokenBound({ ...request, reasoning: { max_tokens: 2000 } }, model(100_000), 'cohere').output,
    ).to.equal(2050);
    const odd = {
      provider: { name: 'p', type: 'anthropic', options: {} },
      deployment: { provider: 'p', model: 'c', options: { max_tokens: 'lots' } },
    } as unknown as UpstreamTarget;
    expect(
      requestTokenBound(
        { ...request, max_tokens: undefined, reasoning_effort: undefined },
        { ...model(100_000), max_output_tokens: 500 },
        'anthropic',
        {},
        odd,
      ).output,
    ).to.equal(500);
  });
});
