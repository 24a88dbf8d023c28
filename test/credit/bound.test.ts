import { expect } from 'chai';
import fc from 'fast-check';
import { maxRequestTokens, requestTokenBound } from '../../plugins/credit/bound';
import type { ModelConfig } from '../../src/config/types';
import type { ChatRequest } from '../../src/types/openai';

const model = (context_length: number): ModelConfig => ({ id: 'm', owned_by: 'x', created: 0, context_length, pricing: { prompt: 1, completion: 1 }, deployments: [] });

describe('credit bound (pure)', () => {
  it('is never below one token per UTF-8 byte plus OpenAI chat framing, for any text (CJK, Thai, emoji, combining marks)', () => {
    const text = fc.string({ unit: 'binary', maxLength: 200 });
    fc.assert(
      fc.property(fc.array(fc.record({ role: fc.constantFrom('system', 'user', 'assistant'), content: text }), { minLength: 1, maxLength: 6 }), (messages) => {
        const req = { model: 'm', messages } as ChatRequest;
        const floor = 3 + messages.reduce((s, m) => s + 4 + Buffer.byteLength(m.content, 'utf8'), 0);
        const b = requestTokenBound(req, model(1_000_000), 'openai');
        return b.input >= floor && b.unbounded === null;
      }),
      { numRuns: 300 },
    );
  });

  it('never exceeds the context length for the prompt, and maxRequestTokens covers every choice', () => {
    const req = { model: 'm', n: 4, max_tokens: 100, messages: [{ role: 'user', content: 'x'.repeat(5000) }] } as ChatRequest;
    expect(requestTokenBound(req, model(1000), 'openai').input).to.equal(1000);
    // p + c <= 1000 per choice: the worst split is p = 900, c = 100 for each of 4 choices.
    expect(maxRequestTokens(req, model(1000), 'openai')).to.equal(900 + 4 * 100);
    expect(maxRequestTokens({ ...req, messages: [{ role: 'user', content: 'hi' }] }, model(100_000), 'openai')).to.be.within(400, 500);
  });

  it('an item without a known maximum makes the prompt bound the context length and names the item', () => {
    const req = { model: 'm', messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'f' } }] }] } as ChatRequest;
    const b = requestTokenBound(req, model(50_000), 'openai');
    expect(b).to.include({ input: 50_000, unbounded: 'messages[0].content[0]' });
    expect(requestTokenBound(req, { ...model(50_000), credit_bound: { file_tokens: 700 } }, 'openai').unbounded).to.equal(null);
  });
});
