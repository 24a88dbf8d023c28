import { expect } from 'chai';
import { sendJson, writeSse, writeNdjson } from '../helpers/mock-upstream';
import { type ProviderRig, useProviderRig, lastSent } from '../helpers/provider-gateway';
import { chat, chatStream } from './fidelity-helpers';
import { ollamaLine } from '../helpers/ollama-fixtures';

// Ollama /api/chat thinking (docs: `think` request field, message.thinking in answers and stream lines).

describe('provider: ollama (think)', () => {
  const rig = useProviderRig('ollama', {}, { model: 'qwen3' });
  const oss = useProviderRig('ollama', {}, { model: 'gpt-oss:20b' });

  it('reasoning maps to think: true / false, a level for gpt-oss', async () => {
    const ok = (r: ProviderRig) =>
      r.up.enqueue((_q, res) =>
        sendJson(
          res,
          200,
          ollamaLine({ content: 'ok' }, { done: true, done_reason: 'stop', prompt_eval_count: 3, eval_count: 1 }),
        ),
      );
    ok(rig);
    await chat(rig, { reasoning_effort: 'medium', messages: [{ role: 'user', content: 'x' }] });
    expect(lastSent(rig).think).to.equal(true);
    ok(rig);
    await chat(rig, { reasoning: { enabled: false }, messages: [{ role: 'user', content: 'x' }] });
    expect(lastSent(rig).think).to.equal(false);
    ok(rig);
    await chat(rig, { messages: [{ role: 'user', content: 'x' }] });
    expect(lastSent(rig)).to.not.have.property('think');
    ok(oss);
    await chat(oss, { reasoning_effort: 'high', messages: [{ role: 'user', content: 'x' }] });
    expect(lastSent(oss).think).to.equal('high');
  });

  it('message.thinking comes back as message.reasoning (plain) and delta.reasoning (stream)', async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(
        res,
        200,
        ollamaLine(
          { content: 'Paris.', thinking: 'The capital of France...' },
          { done: true, done_reason: 'stop', prompt_eval_count: 12, eval_count: 30 },
        ),
      ),
    );
    const r = await chat(rig, { reasoning_effort: 'low', messages: [{ role: 'user', content: 'capital?' }] });
    expect(r.json.choices[0].message).to.deep.include({ content: 'Paris.', reasoning: 'The capital of France...' });
    rig.up.enqueue((_r, res) =>
      writeNdjson(res, [
        ollamaLine({ thinking: 'The capital ' }),
        ollamaLine({ thinking: 'of France...' }),
        ollamaLine({ content: 'Paris.' }),
        ollamaLine({}, { done: true, done_reason: 'stop', prompt_eval_count: 12, eval_count: 30 }),
      ]),
    );
    const s = await chatStream(rig, { reasoning_effort: 'low', messages: [{ role: 'user', content: 'capital?' }] });
    expect(s.reasoning).to.equal('The capital of France...');
    expect(s.text).to.equal('Paris.');
    expect(s.finishes).to.deep.equal(['stop']);
  });
});

// Cohere v2 chat: usage.billed_units / tokens / cached_tokens; `thinking` request field and thinking content.
const ev = (type: string, data: Record<string, unknown> = {}) => ({ event: type, data: { type, ...data } });
const cohereUsage = {
  billed_units: { input_tokens: 900, output_tokens: 80 },
  tokens: { input_tokens: 1100, output_tokens: 80 },
  cached_tokens: 600,
};

describe('provider: cohere (billed units, cached tokens, thinking)', () => {
  const rig = useProviderRig('cohere');

  it('prompt tokens are the billed ones, cached_tokens is kept; thinking is asked and returned as reasoning (plain)', async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(res, 200, {
        id: 'c1',
        finish_reason: 'COMPLETE',
        message: {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Alice has 2 sisters...' },
            { type: 'text', text: 'Three.' },
          ],
        },
        usage: cohereUsage,
      }),
    );
    const r = await chat(rig, { reasoning: { max_tokens: 2000 }, messages: [{ role: 'user', content: 'sisters?' }] });
    expect(lastSent(rig).thinking).to.deep.equal({ type: 'enabled', token_budget: 2000 });
    expect(r.json.choices[0].message).to.deep.include({ content: 'Three.', reasoning: 'Alice has 2 sisters...' });
    expect(r.json.usage).to.deep.equal({
      prompt_tokens: 900,
      completion_tokens: 80,
      total_tokens: 980,
      prompt_tokens_details: { cached_tokens: 600 },
    });
    rig.up.enqueue((_r, res) =>
      sendJson(res, 200, {
        id: 'c1',
        finish_reason: 'COMPLETE',
        message: { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
        usage: cohereUsage,
      }),
    );
    await chat(rig, { reasoning_effort: 'none', messages: [{ role: 'user', content: 'x' }] });
    expect(lastSent(rig).thinking).to.deep.equal({ type: 'disabled' });
  });

  it('streams thinking content deltas as delta.reasoning; usage from message-end with cached tokens', async () => {
    rig.up.enqueue((_r, res) =>
      writeSse(
        res,
        [
          ev('message-start', { id: 'm1', delta: { message: { role: 'assistant', content: [] } } }),
          ev('content-start', { index: 0, delta: { message: { content: { type: 'thinking', thinking: '' } } } }),
          ev('content-delta', { index: 0, delta: { message: { content: { thinking: 'Alice has ' } } } }),
          ev('content-delta', { index: 0, delta: { message: { content: { thinking: '2 sisters.' } } } }),
          ev('content-end', { index: 0 }),
          ev('content-start', { index: 1, delta: { message: { content: { type: 'text', text: '' } } } }),
          ev('content-delta', { index: 1, delta: { message: { content: { text: 'Three.' } } } }),
          ev('content-end', { index: 1 }),
          ev('message-end', { delta: { finish_reason: 'COMPLETE', usage: cohereUsage } }),
        ],
        { named: true },
      ),
    );
    const s = await chatStream(rig, { reasoning_effort: 'high', messages: [{ role: 'user', content: 'x' }] });
    expect(s.reasoning).to.equal('Alice has 2 sisters.');
    expect(s.text).to.equal('Three.');
    expect(s.usage).to.deep.equal({
      prompt_tokens: 900,
      completion_tokens: 80,
      total_tokens: 980,
      prompt_tokens_details: { cached_tokens: 600 },
    });
  });
});
