import { expect } from 'chai';
import { sendJson, writeSse } from '../helpers/mock-upstream';
import { weatherTool, useProviderRig, lastSent } from '../helpers/provider-gateway';
import { chat, chatStream } from './fidelity-helpers';
import {
  anthropicEvent as ev,
  anthropicMessage,
  messageEnd,
  messageStart,
  textBlock,
  toolUseBlock,
} from '../helpers/anthropic-sse';

// Shapes from Anthropic's prompt-caching and extended-thinking guides (Messages API).
const usage = { input_tokens: 21, cache_creation_input_tokens: 1800, cache_read_input_tokens: 300, output_tokens: 95 };
const message = (content: unknown[], stopReason = 'end_turn') => anthropicMessage(content, usage, { stopReason });
const SIG = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds';

describe('provider: anthropic (caching and extended thinking)', () => {
  const rig = useProviderRig('anthropic');

  it('cache_control on system parts, content parts, a whole message and a tool reaches Anthropic (system as blocks)', async () => {
    rig.up.enqueue((_r, res) => sendJson(res, 200, message([{ type: 'text', text: 'ok' }])));
    const r = await chat(rig, {
      max_tokens: 200,
      tools: [{ ...weatherTool, cache_control: { type: 'ephemeral' } }],
      messages: [
        {
          role: 'system',
          content: [
            { type: 'text', text: 'You are a librarian.' },
            { type: 'text', text: 'BOOK TEXT', cache_control: { type: 'ephemeral', ttl: '1h' } },
          ],
        },
        { role: 'user', content: 'First question', cache_control: { type: 'ephemeral' } },
        { role: 'assistant', content: 'An answer' },
        { role: 'user', content: [{ type: 'text', text: 'Second question', cache_control: { type: 'ephemeral' } }] },
      ],
    });
    expect(r.status).to.equal(200);
    const sent = lastSent(rig);
    expect(sent.system).to.deep.equal([
      { type: 'text', text: 'You are a librarian.' },
      { type: 'text', text: 'BOOK TEXT', cache_control: { type: 'ephemeral', ttl: '1h' } },
    ]);
    expect(sent.messages).to.deep.equal([
      { role: 'user', content: [{ type: 'text', text: 'First question', cache_control: { type: 'ephemeral' } }] },
      { role: 'assistant', content: [{ type: 'text', text: 'An answer' }] },
      { role: 'user', content: [{ type: 'text', text: 'Second question', cache_control: { type: 'ephemeral' } }] },
    ]);
    expect((sent.tools as Array<Record<string, unknown>>)[0].cache_control).to.deep.equal({ type: 'ephemeral' });
  });

  it('usage reports cache reads as cached_tokens and cache writes as cache_write_tokens, all counted in prompt_tokens (plain and streamed)', async () => {
    rig.up.enqueue((_r, res) => sendJson(res, 200, message([{ type: 'text', text: 'ok' }])));
    const r = await chat(rig, { messages: [{ role: 'user', content: 'x' }] });
    expect(r.json.usage).to.deep.equal({
      prompt_tokens: 2121,
      completion_tokens: 95,
      total_tokens: 2216,
      prompt_tokens_details: { cached_tokens: 300, cache_write_tokens: 1800 },
    });
    rig.up.enqueue((_r, res) =>
      writeSse(res, [messageStart(usage), ...textBlock(0, 'ok'), ...messageEnd('end_turn', 95)], { named: true }),
    );
    const s = await chatStream(rig, { messages: [{ role: 'user', content: 'x' }] });
    expect(s.usage).to.deep.equal({
      prompt_tokens: 2121,
      completion_tokens: 95,
      total_tokens: 2216,
      prompt_tokens_details: { cached_tokens: 300, cache_write_tokens: 1800 },
    });
  });

  it('reasoning_effort and the reasoning object become thinking.budget_tokens (temperature and a forced tool left out); effort none disables it', async () => {
    const ok = () => rig.up.enqueue((_r, res) => sendJson(res, 200, message([{ type: 'text', text: 'ok' }])));
    ok();
    await chat(rig, {
      max_tokens: 10000,
      reasoning_effort: 'high',
      temperature: 0.3,
      top_k: 5,
      messages: [{ role: 'user', content: 'x' }],
    });
    let sent = lastSent(rig);
    expect(sent.thinking).to.deep.equal({ type: 'enabled', budget_tokens: 8000 });
    expect(sent.max_tokens).to.equal(10000);
    expect(sent).to.not.have.any.keys('temperature', 'top_k');
    ok();
    await chat(rig, {
      max_tokens: 1000,
      reasoning: { max_tokens: 2048 },
      tools: [weatherTool],
      tool_choice: 'required',
      messages: [{ role: 'user', content: 'x' }],
    });
    sent = lastSent(rig);
    expect(sent.thinking).to.deep.equal({ type: 'enabled', budget_tokens: 2048 });
    expect(sent.max_tokens).to.be.greaterThan(2048); // the budget is part of max_tokens
    expect(sent.tool_choice).to.deep.equal({ type: 'auto' });
    ok();
    await chat(rig, { reasoning_effort: 'none', messages: [{ role: 'user', content: 'x' }] });
    expect(lastSent(rig).thinking).to.deep.equal({ type: 'disabled' });
  });

  it('a plain answer with thinking: message.reasoning, reasoning_details with the signature, redacted thinking as encrypted', async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(
        res,
        200,
        message([
          { type: 'thinking', thinking: 'Let me analyze this step by step...', signature: SIG },
          { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a' },
          { type: 'text', text: 'Based on my analysis...' },
        ]),
      ),
    );
    const r = await chat(rig, { reasoning_effort: 'low', messages: [{ role: 'user', content: 'x' }] });
    const m = r.json.choices[0].message;
    expect(m.content).to.equal('Based on my analysis...');
    expect(m.reasoning).to.equal('Let me analyze this step by step...');
    expect(m.reasoning_details).to.deep.equal([
      {
        type: 'reasoning.text',
        text: 'Let me analyze this step by step...',
        signature: SIG,
        format: 'anthropic-claude-v1',
        index: 0,
      },
      { type: 'reasoning.encrypted', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a', format: 'anthropic-claude-v1', index: 1 },
    ]);
  });

  it('streams thinking_delta as delta.reasoning and signature_delta into reasoning_details, then the text and the tool call', async () => {
    rig.up.enqueue((_r, res) =>
      writeSse(
        res,
        [
          messageStart({ input_tokens: 10 }),
          ev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }),
          ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'I need to find ' } }),
          ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'the weather.' } }),
          ev('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: SIG } }),
          ev('content_block_stop', { index: 0 }),
          ...toolUseBlock(1, 'toolu_1', 'get_weather', '{"city":"Paris"}'),
          ...messageEnd('tool_use', 40),
        ],
        { named: true },
      ),
    );
    const s = await chatStream(rig, {
      reasoning_effort: 'medium',
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'weather?' }],
    });
    expect(s.reasoning).to.equal('I need to find the weather.');
    expect(s.details).to.deep.equal([
      {
        type: 'reasoning.text',
        text: 'I need to find the weather.',
        signature: SIG,
        format: 'anthropic-claude-v1',
        index: 0,
      },
    ]);
    expect(s.calls).to.deep.equal([{ id: 'toolu_1', name: 'get_weather', args: '{"city":"Paris"}' }]);
    expect(s.finishes).to.deep.equal(['tool_calls']);
    expect(s.done).to.equal(true);
  });

  it('reasoning_details sent back on the next turn reach Anthropic as thinking blocks first, signatures unchanged (multi-turn tool use)', async () => {
    rig.up.enqueue((_r, res) => sendJson(res, 200, message([{ type: 'text', text: 'It is sunny.' }])));
    await chat(rig, {
      reasoning_effort: 'medium',
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'weather?' },
        {
          role: 'assistant',
          content: null,
          reasoning: 'I need to find the weather.',
          reasoning_details: [
            {
              type: 'reasoning.text',
              text: 'I need to find the weather.',
              signature: SIG,
              format: 'anthropic-claude-v1',
              index: 0,
            },
            { type: 'reasoning.encrypted', data: 'EmwK', format: 'anthropic-claude-v1', index: 1 },
          ],
          tool_calls: [
            { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: '18C' },
      ],
    });
    expect((lastSent(rig).messages as unknown[])[1]).to.deep.equal({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'I need to find the weather.', signature: SIG },
        { type: 'redacted_thinking', data: 'EmwK' },
        { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
      ],
    });
  });

  it('reasoning.exclude: the model thinks, the answer carries no reasoning (plain and streamed)', async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(
        res,
        200,
        message([
          { type: 'thinking', thinking: 'secret', signature: SIG },
          { type: 'text', text: 'ok' },
        ]),
      ),
    );
    const r = await chat(rig, {
      reasoning: { effort: 'low', exclude: true },
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(lastSent(rig).thinking).to.deep.include({ type: 'enabled' });
    expect(r.json.choices[0].message).to.not.have.any.keys('reasoning', 'reasoning_details');
    rig.up.enqueue((_r, res) =>
      writeSse(
        res,
        [
          messageStart({ input_tokens: 10 }),
          ev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }),
          ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'secret' } }),
          ev('content_block_start', { index: 1, content_block: { type: 'text', text: '' } }),
          ev('content_block_delta', { index: 1, delta: { type: 'text_delta', text: 'ok' } }),
          ...messageEnd('end_turn', 4),
        ],
        { named: true },
      ),
    );
    const s = await chatStream(rig, {
      reasoning: { effort: 'low', exclude: true },
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(s.text).to.equal('ok');
    expect(s.reasoning).to.equal('');
    expect(s.details).to.deep.equal([]);
  });
});
