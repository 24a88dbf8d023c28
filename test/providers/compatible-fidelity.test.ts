import { expect } from 'chai';
import OpenAI from 'openai';
import { openaiFixtures, sendJson, writeSse } from '../helpers/mock-upstream';
import { providerRig, weatherTool, type ProviderRig, useProviderRig, lastSent } from '../helpers/provider-gateway';
import { chat, chatStream } from './fidelity-helpers';
import { mistralAnswer, mistralChunk } from '../helpers/mistral-fixtures';

// OpenAI-compatible upstreams: OpenAI (prompt caching usage, reasoning_effort), OpenRouter
// (reasoning, reasoning_details, cache_write_tokens), DeepSeek / vLLM (reasoning_content), Azure, Mistral.
const cacheUsage = {
  prompt_tokens: 2006,
  completion_tokens: 300,
  total_tokens: 2306,
  prompt_tokens_details: { cached_tokens: 1920, cache_write_tokens: 40 },
  completion_tokens_details: { reasoning_tokens: 256 },
};

describe('provider: openai-compatible (reasoning, cached tokens, stream errors)', () => {
  let rig: ProviderRig;
  let azure: ProviderRig;
  before(async () => {
    rig = await providerRig('openai'); // configured name 'p', type openai
    azure = await providerRig('azure', { options: { api_version: '2024-10-21' } });
  });
  after(async () => {
    await rig.stop();
    await azure.stop();
  });

  it('reasoning_effort and the reasoning object reach an OpenAI-compatible upstream as sent', async () => {
    rig.up.enqueue((_r, res) => sendJson(res, 200, openaiFixtures.completion('ok')));
    await chat(rig, {
      reasoning_effort: 'high',
      reasoning: { effort: 'high', exclude: false },
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(lastSent(rig)).to.deep.include({ reasoning_effort: 'high', reasoning: { effort: 'high', exclude: false } });
  });

  it('reasoning (OpenRouter) and reasoning_content (DeepSeek) come back as message.reasoning; usage details pass through', async () => {
    const body = openaiFixtures.completion('42');
    body.choices[0].message = {
      ...body.choices[0].message,
      reasoning_content: 'Six times seven.',
    } as (typeof body.choices)[0]['message'];
    rig.up.enqueue((_r, res) => sendJson(res, 200, { ...body, usage: cacheUsage }));
    const r = await chat(rig, { messages: [{ role: 'user', content: 'x' }] });
    expect(r.json.choices[0].message).to.deep.include({ content: '42', reasoning: 'Six times seven.' });
    expect(r.json.choices[0].message).to.not.have.property('reasoning_content');
    expect(r.json.usage).to.deep.equal(cacheUsage);
    azure.up.enqueue((_r, res) => sendJson(res, 200, { ...openaiFixtures.completion('ok'), usage: cacheUsage }));
    expect((await chat(azure, { messages: [{ role: 'user', content: 'x' }] })).json.usage).to.deep.equal(cacheUsage);
  });

  it('streamed reasoning deltas (reasoning_content and reasoning_details) reach the client as delta.reasoning', async () => {
    rig.up.enqueue((_r, res) =>
      writeSse(res, [
        openaiFixtures.chunk({ role: 'assistant', content: '' }),
        openaiFixtures.chunk({ reasoning_content: 'Six ' }),
        openaiFixtures.chunk({
          reasoning: 'times seven.',
          reasoning_details: [{ type: 'reasoning.text', text: 'times seven.', format: 'unknown', index: 0 }],
        }),
        openaiFixtures.chunk({ content: '42' }),
        openaiFixtures.chunk({}, 'stop'),
        { ...openaiFixtures.usageChunk(0, 0), usage: cacheUsage },
      ]),
    );
    const s = await chatStream(rig, { messages: [{ role: 'user', content: 'x' }] });
    expect(s.reasoning).to.equal('Six times seven.');
    expect(s.text).to.equal('42');
    expect(s.details[0]).to.deep.include({ type: 'reasoning.text', text: 'times seven.' });
    expect(s.usage).to.deep.equal(cacheUsage);
  });

  it('an error event before any content takes its status from the error (429 here) and names the configured provider, not its type', async () => {
    rig.up.enqueue((_r, res) =>
      writeSse(
        res,
        [
          openaiFixtures.chunk({ role: 'assistant', content: '' }),
          { error: { message: 'Rate limit reached', type: 'rate_limit_error', code: 'rate_limit_exceeded' } },
        ],
        { done: false },
      ),
    );
    const e = (await rig.client.chat.completions
      .create({ model: 'p/m', stream: true, messages: [{ role: 'user', content: 'x' }] })
      .then(async (s) => {
        for await (const _ of s) void _;
      })
      .catch((x: unknown) => x)) as InstanceType<typeof OpenAI.APIError>;
    expect(e).to.be.instanceOf(OpenAI.RateLimitError);
    expect(e.message).to.include("'p'").and.include('Rate limit reached');
    expect(e.message).to.not.include("'upstream'").and.not.include("'openai'");
  });

  it('an error event without a status is an upstream stream error (502), not an invented 500; after content it is one error event', async () => {
    azure.up.enqueue((_r, res) =>
      writeSse(
        res,
        [
          openaiFixtures.chunk({ role: 'assistant', content: 'Hel' }),
          { error: { message: 'The server had an error while processing your request.' } },
        ],
        { done: false },
      ),
    );
    const s = await chatStream(azure, { messages: [{ role: 'user', content: 'x' }] }).catch((x: unknown) => x);
    const { error, done } = s as Awaited<ReturnType<typeof chatStream>>;
    expect(done).to.equal(false);
    expect(error).to.deep.include({ type: 'upstream_error', code: 'upstream_stream_error' });
    expect(error?.message).to.include("'p'").and.not.include('answered 500').and.not.include("'azure'");
  });

  it('an upstream that hangs up after taking the request is upstream_closed, not upstream_unreachable', async () => {
    rig.up.enqueue((_req, res) => void res.socket?.destroy());
    const r = await chat(rig, { stream: true, messages: [{ role: 'user', content: 'x' }] });
    expect(r.status).to.equal(502);
    expect(r.json.error?.code).to.equal('upstream_closed');
    expect(r.json.error?.message).to.include("'p'");
  });
});

describe('provider: mistral (finish reasons and refused fields)', () => {
  const rig = useProviderRig('mistral');
  const answer = (content: string, finish: string) => mistralAnswer({ role: 'assistant', content }, finish);

  it('finish_reason "error" is a failure (502, retryable), plain and streamed; never billed as a success', async () => {
    rig.up.enqueue((_r, res) => sendJson(res, 200, answer('partial', 'error')));
    const r = await chat(rig, { messages: [{ role: 'user', content: 'x' }] });
    expect(r.status).to.equal(502);
    expect(r.json.error?.code).to.equal('upstream_stream_error');
    rig.up.enqueue((_r, res) =>
      writeSse(res, [
        mistralChunk({ role: 'assistant', content: 'Hel' }),
        mistralChunk({ content: 'lo' }, 'error', { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 }),
      ]),
    );
    const s = await chatStream(rig, { messages: [{ role: 'user', content: 'x' }] });
    expect(s.done).to.equal(false);
    expect(s.error?.code).to.equal('upstream_stream_error');
    expect(s.finishes).to.deep.equal([]);
  });

  it('model_length becomes length (plain and streamed)', async () => {
    rig.up.enqueue((_r, res) => sendJson(res, 200, answer('cut', 'model_length')));
    expect((await chat(rig, { messages: [{ role: 'user', content: 'x' }] })).json.choices[0].finish_reason).to.equal(
      'length',
    );
    rig.up.enqueue((_r, res) =>
      writeSse(res, [
        mistralChunk({ role: 'assistant', content: 'cut' }),
        mistralChunk({}, 'model_length', { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 }),
      ]),
    );
    expect((await chatStream(rig, { messages: [{ role: 'user', content: 'x' }] })).finishes).to.deep.equal(['length']);
  });

  it("leaves out the message fields Mistral refuses (name on user messages, the SDK's refusal / parsed) and body fields it does not define", async () => {
    rig.up.enqueue((_r, res) => sendJson(res, 200, answer('ok', 'stop')));
    await chat(rig, {
      some_unknown_field: 1,
      tools: [weatherTool],
      messages: [
        { role: 'user', name: 'alice', content: 'weather?' },
        {
          role: 'assistant',
          content: null,
          refusal: null,
          parsed: null,
          tool_calls: [
            { id: 'abcDEF123', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'abcDEF123', content: '18C' },
      ],
    });
    const sent = lastSent(rig);
    expect(sent).to.not.have.property('some_unknown_field');
    expect(sent.messages).to.deep.equal([
      { role: 'user', content: 'weather?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'abcDEF123', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        ],
      },
      { role: 'tool', content: '18C', tool_call_id: 'abcDEF123' },
    ]);
  });

  it("Magistral's thinking content chunks become message.reasoning and a string content", async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(res, 200, {
        ...answer('', 'stop'),
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: [
                { type: 'thinking', thinking: [{ type: 'text', text: 'Two plus two.' }] },
                { type: 'text', text: '4' },
              ],
            },
            finish_reason: 'stop',
          },
        ],
      }),
    );
    const m = (await chat(rig, { messages: [{ role: 'user', content: '2+2?' }] })).json.choices[0].message;
    expect(m).to.deep.include({ content: '4', reasoning: 'Two plus two.' });
  });
});
