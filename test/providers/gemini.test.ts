import { expect } from 'chai';
import OpenAI from 'openai';
import { sendJson, writeSse } from '../helpers/mock-upstream';
import {
  weatherTool,
  streamWithWeatherTool,
  lastFrameError,
  lastRequest,
  streamFrames,
  useProviderRig,
} from '../helpers/provider-gateway';

// Shapes from the Gemini API reference (GenerateContentResponse).
const resp = (
  parts: unknown[],
  finishReason = 'STOP',
  usageMetadata: unknown = {
    promptTokenCount: 9,
    candidatesTokenCount: 5,
    totalTokenCount: 14,
    cachedContentTokenCount: 2,
  },
) => ({
  candidates: [{ content: { parts, role: 'model' }, finishReason, index: 0 }],
  usageMetadata,
  modelVersion: 'gemini-2.0-flash',
});

describe('provider: gemini', () => {
  const rig = useProviderRig('gemini');

  it('translates the request: systemInstruction, roles, functionResponse names, generationConfig, tools, toolConfig, cleaned schemas', async () => {
    rig.up.enqueue((_r, res) => sendJson(res, 200, resp([{ text: 'ok' }])));
    await rig.client.chat.completions.create({
      model: 'p/m',
      temperature: 0.3,
      max_tokens: 50,
      stop: ['X'],
      seed: 7,
      tools: [
        {
          type: 'function',
          function: {
            name: 'lookup',
            parameters: {
              type: 'object',
              additionalProperties: false,
              $schema: 'http://json-schema.org/draft-07/schema#',
              properties: { q: { $ref: '#/$defs/Q' }, tags: { type: ['array', 'null'], items: { type: 'string' } } },
              required: ['q'],
              $defs: { Q: { type: 'string', description: 'query' } },
            },
          },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'lookup' } },
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'out',
          schema: { type: 'object', additionalProperties: false, properties: { a: { type: 'string' } } },
        },
      },
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'find' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'found' },
      ],
    });
    const r = lastRequest(rig);
    expect(r.path).to.equal('/v1beta/models/native-model:generateContent');
    expect(r.headers['x-goog-api-key']).to.equal('sk-provider-key');
    expect(r.json).to.deep.equal({
      contents: [
        { role: 'user', parts: [{ text: 'find' }] },
        { role: 'model', parts: [{ functionCall: { name: 'lookup', args: { q: 'x' } } }] },
        { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { content: 'found' } } }] },
      ],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      generationConfig: {
        temperature: 0.3,
        maxOutputTokens: 50,
        stopSequences: ['X'],
        seed: 7,
        responseMimeType: 'application/json',
        responseSchema: { type: 'object', properties: { a: { type: 'string' } } },
      },
      tools: [
        {
          functionDeclarations: [
            {
              name: 'lookup',
              parameters: {
                type: 'object',
                properties: {
                  q: { type: 'string', description: 'query' },
                  tags: { type: 'array', nullable: true, items: { type: 'string' } },
                },
                required: ['q'],
              },
            },
          ],
        },
      ],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['lookup'] } },
    });
  });

  it('parses plain answers, parallel function calls (with gateway ids), safety as content_filter, usage', async () => {
    rig.up.enqueue((_r, res) => sendJson(res, 200, resp([{ text: 'Hi there' }], 'MAX_TOKENS')));
    const c = await rig.client.chat.completions.create({ model: 'p/m', messages: [{ role: 'user', content: 'hi' }] });
    expect(c.choices[0]).to.deep.include({ finish_reason: 'length' });
    expect(c.choices[0].message.content).to.equal('Hi there');
    expect(c.usage).to.deep.include({ prompt_tokens: 9, completion_tokens: 5, total_tokens: 14 });
    expect(c.usage?.prompt_tokens_details?.cached_tokens).to.equal(2);
    rig.up.enqueue((_r, res) =>
      sendJson(
        res,
        200,
        resp([
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } } },
          { functionCall: { name: 'get_weather', args: { city: 'Rome' } } },
        ]),
      ),
    );
    const t = await rig.client.chat.completions.create({
      model: 'p/m',
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'weather' }],
    });
    expect(t.choices[0].finish_reason).to.equal('tool_calls');
    const calls = t.choices[0].message.tool_calls as Array<{
      id: string;
      function: { name: string; arguments: string };
    }>;
    expect(calls.map((x) => x.function.arguments)).to.deep.equal(['{"city":"Paris"}', '{"city":"Rome"}']);
    expect(new Set(calls.map((x) => x.id)).size).to.equal(2);
    rig.up.enqueue((_r, res) => sendJson(res, 200, resp([], 'SAFETY')));
    const s = await rig.client.chat.completions.create({ model: 'p/m', messages: [{ role: 'user', content: 'x' }] });
    expect(s.choices[0].finish_reason).to.equal('content_filter');
  });

  it('streams with alt=sse: role first, text deltas, function calls with stable indexes, one finish, usage', async () => {
    rig.up.enqueue((req, res) => {
      expect(req.path).to.equal('/v1beta/models/native-model:streamGenerateContent?alt=sse');
      return writeSse(
        res,
        [
          {
            candidates: [{ content: { parts: [{ text: 'Checking ' }], role: 'model' }, index: 0 }],
            usageMetadata: { promptTokenCount: 9 },
          },
          {
            candidates: [
              {
                content: {
                  parts: [{ text: 'now.' }, { functionCall: { name: 'get_weather', args: { city: 'Paris' } } }],
                  role: 'model',
                },
                index: 0,
              },
            ],
          },
          {
            candidates: [
              {
                content: { parts: [{ functionCall: { name: 'get_weather', args: { city: 'Rome' } } }], role: 'model' },
                finishReason: 'STOP',
                index: 0,
              },
            ],
            usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 12, totalTokenCount: 21 },
          },
        ],
        { done: false },
      );
    });
    const s = await streamWithWeatherTool(rig);
    expect(s.role).to.equal('assistant');
    expect(s.text).to.equal('Checking now.');
    expect(s.calls.map((c) => [c.name, c.args])).to.deep.equal([
      ['get_weather', '{"city":"Paris"}'],
      ['get_weather', '{"city":"Rome"}'],
    ]);
    expect(s.finishes).to.deep.equal(['tool_calls']);
    expect(s.usage).to.deep.include({ prompt_tokens: 9, completion_tokens: 12 });
  });

  it('a mid-stream error and a stream cut before finishReason both end with an error event', async () => {
    rig.up.enqueue((_r, res) =>
      writeSse(
        res,
        [
          { candidates: [{ content: { parts: [{ text: 'a' }] }, index: 0 }] },
          { error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } },
        ],
        { done: false },
      ),
    );
    const f1 = await streamFrames(rig);
    expect(lastFrameError(f1).message).to.include('overloaded');
    rig.up.enqueue((_r, res) =>
      writeSse(res, [{ candidates: [{ content: { parts: [{ text: 'a' }] }, index: 0 }] }], { done: false }),
    );
    const f2 = await streamFrames(rig);
    expect(lastFrameError(f2).code).to.equal('stream_interrupted');
  });

  it('maps error statuses (429 RESOURCE_EXHAUSTED, 400 INVALID_ARGUMENT, 403 key problems as 502)', async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(res, 429, {
        error: { code: 429, message: 'Resource has been exhausted (e.g. check quota).', status: 'RESOURCE_EXHAUSTED' },
      }),
    );
    expect(
      await rig.client.chat.completions
        .create({ model: 'p/m', messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e),
    ).to.be.instanceOf(OpenAI.RateLimitError);
    rig.up.enqueue((_r, res) =>
      sendJson(res, 400, {
        error: { code: 400, message: 'Invalid JSON payload received.', status: 'INVALID_ARGUMENT' },
      }),
    );
    expect(
      await rig.client.chat.completions
        .create({ model: 'p/m', messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e),
    ).to.be.instanceOf(OpenAI.BadRequestError);
    rig.up.enqueue((_r, res) =>
      sendJson(res, 403, { error: { code: 403, message: 'API key not valid.', status: 'PERMISSION_DENIED' } }),
    );
    expect(
      (
        (await rig.client.chat.completions
          .create({ model: 'p/m', messages: [{ role: 'user', content: 'x' }] })
          .catch((e: unknown) => e)) as { status: number }
      ).status,
    ).to.equal(502);
  });
});
