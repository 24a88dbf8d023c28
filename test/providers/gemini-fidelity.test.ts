import { expect } from 'chai';
import { sendJson, writeSse } from '../helpers/mock-upstream';
import { providerRig, weatherTool, type ProviderRig, lastSent } from '../helpers/provider-gateway';
import { chat, chatStream } from './fidelity-helpers';

// Shapes from the Gemini API docs: thinking (thinkingConfig, thought parts, thoughtsTokenCount),
// thought signatures on function calls, and context caching (cachedContentTokenCount).
const usageMetadata = {
  promptTokenCount: 1200,
  cachedContentTokenCount: 1000,
  candidatesTokenCount: 40,
  thoughtsTokenCount: 250,
  totalTokenCount: 1490,
};
const resp = (parts: unknown[], finishReason = 'STOP') => ({
  candidates: [{ content: { parts, role: 'model' }, finishReason, index: 0 }],
  usageMetadata,
  modelVersion: 'gemini-2.5-flash',
});
const SIG = 'CiQB0e2Kb3dRh+BYdbTqmjAd0VxdgeN/V8I=';

describe('provider: gemini (thinking, thought signatures, cached tokens)', () => {
  let rig: ProviderRig;
  let rig3: ProviderRig;
  before(async () => {
    rig = await providerRig('gemini', {}, { model: 'gemini-2.5-flash' });
    rig3 = await providerRig('gemini', {}, { model: 'gemini-3-pro-preview' });
  });
  after(async () => {
    await rig.stop();
    await rig3.stop();
  });

  it('reasoning maps to thinkingConfig: a budget on Gemini 2.5 (0 for none), a thinkingLevel on Gemini 3; exclude asks for no thoughts', async () => {
    const ok = (r: ProviderRig) => r.up.enqueue((_q, res) => sendJson(res, 200, resp([{ text: 'ok' }])));
    ok(rig);
    await chat(rig, { max_tokens: 4000, reasoning_effort: 'low', messages: [{ role: 'user', content: 'x' }] });
    expect((lastSent(rig).generationConfig as Record<string, unknown>).thinkingConfig).to.deep.equal({
      thinkingBudget: 1024,
      includeThoughts: true,
    });
    ok(rig);
    await chat(rig, { reasoning: { max_tokens: 3000, exclude: true }, messages: [{ role: 'user', content: 'x' }] });
    expect((lastSent(rig).generationConfig as Record<string, unknown>).thinkingConfig).to.deep.equal({
      thinkingBudget: 3000,
      includeThoughts: false,
    });
    ok(rig);
    await chat(rig, { reasoning_effort: 'none', messages: [{ role: 'user', content: 'x' }] });
    expect((lastSent(rig).generationConfig as Record<string, unknown>).thinkingConfig).to.deep.equal({
      thinkingBudget: 0,
      includeThoughts: false,
    });
    ok(rig3);
    await chat(rig3, { reasoning_effort: 'high', messages: [{ role: 'user', content: 'x' }] });
    expect((lastSent(rig3).generationConfig as Record<string, unknown>).thinkingConfig).to.deep.equal({
      thinkingLevel: 'high',
      includeThoughts: true,
    });
  });

  it('thought parts become message.reasoning, a function call thoughtSignature a reasoning detail tied to its call id; usage keeps cached and thinking tokens', async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(
        res,
        200,
        resp([
          { text: 'The user wants weather.', thought: true },
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SIG },
        ]),
      ),
    );
    const r = await chat(rig, {
      reasoning_effort: 'medium',
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'weather?' }],
    });
    const m = r.json.choices[0].message;
    expect(m.reasoning).to.equal('The user wants weather.');
    expect(m.content).to.equal(null);
    const id = m.tool_calls?.[0].id;
    expect(m.reasoning_details).to.deep.equal([
      { type: 'reasoning.encrypted', data: SIG, id, format: 'google-gemini-v1', index: 0 },
    ]);
    expect(r.json.usage).to.deep.equal({
      prompt_tokens: 1200,
      completion_tokens: 290,
      total_tokens: 1490,
      prompt_tokens_details: { cached_tokens: 1000 },
      completion_tokens_details: { reasoning_tokens: 250 },
    });
  });

  it('streams thoughts as delta.reasoning and the signature as a reasoning detail with the call id', async () => {
    rig.up.enqueue((_r, res) =>
      writeSse(
        res,
        [
          {
            candidates: [{ content: { parts: [{ text: 'Thinking about ', thought: true }], role: 'model' }, index: 0 }],
          },
          { candidates: [{ content: { parts: [{ text: 'Paris.', thought: true }], role: 'model' }, index: 0 }] },
          {
            candidates: [
              {
                content: {
                  parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SIG }],
                  role: 'model',
                },
                finishReason: 'STOP',
                index: 0,
              },
            ],
            usageMetadata,
          },
        ],
        { done: false },
      ),
    );
    const s = await chatStream(rig, {
      reasoning_effort: 'medium',
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'weather?' }],
    });
    expect(s.reasoning).to.equal('Thinking about Paris.');
    expect(s.calls).to.have.length(1);
    expect(s.details).to.deep.equal([
      { type: 'reasoning.encrypted', text: '', data: SIG, id: s.calls[0].id, format: 'google-gemini-v1', index: 0 },
    ]);
    expect(s.finishes).to.deep.equal(['tool_calls']);
    expect(s.usage).to.deep.include({ prompt_tokens: 1200, completion_tokens: 290 });
    expect(s.usage?.prompt_tokens_details).to.deep.equal({ cached_tokens: 1000 });
    expect(s.usage?.completion_tokens_details).to.deep.equal({ reasoning_tokens: 250 });
  });

  it('a function-call turn sent back carries its thoughtSignature on the same functionCall part (Gemini 3 refuses it without)', async () => {
    rig3.up.enqueue((_r, res) => sendJson(res, 200, resp([{ text: 'It is 18C.' }])));
    await chat(rig3, {
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'weather in Paris and Rome?' },
        {
          role: 'assistant',
          content: null,
          reasoning_details: [
            { type: 'reasoning.encrypted', data: SIG, id: 'call_a', format: 'google-gemini-v1', index: 0 },
          ],
          tool_calls: [
            { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: '18C' },
        { role: 'tool', tool_call_id: 'call_b', content: '21C' },
      ],
    });
    const contents = lastSent(rig3).contents as Array<{ role: string; parts: unknown[] }>;
    expect(contents[1]).to.deep.equal({
      role: 'model',
      parts: [
        { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SIG },
        { functionCall: { name: 'get_weather', args: { city: 'Rome' } } },
      ],
    });
  });

  it('a thoughtSignature on a text part comes back without a call id and returns on the first part of that turn', async () => {
    rig.up.enqueue((_r, res) => sendJson(res, 200, resp([{ text: 'Paris is sunny.', thoughtSignature: SIG }])));
    const m = (await chat(rig, { reasoning_effort: 'low', messages: [{ role: 'user', content: 'weather?' }] })).json
      .choices[0].message;
    expect(m.reasoning_details).to.deep.equal([
      { type: 'reasoning.encrypted', data: SIG, id: null, format: 'google-gemini-v1', index: 0 },
    ]);
    rig.up.enqueue((_r, res) => sendJson(res, 200, resp([{ text: 'ok' }])));
    await chat(rig, {
      messages: [{ role: 'user', content: 'weather?' }, m, { role: 'user', content: 'and tomorrow?' }],
    });
    expect((lastSent(rig).contents as unknown[])[1]).to.deep.equal({
      role: 'model',
      parts: [{ text: 'Paris is sunny.', thoughtSignature: SIG }],
    });
  });
});
