import { expect } from 'chai';
import OpenAI from 'openai';
import { sendJson } from '../helpers/mock-upstream';
import { converseAnswer } from '../helpers/bedrock-fixtures';
import {
  weatherTool,
  streamWithWeatherTool,
  lastRequest,
  streamFrames,
  useProviderRig,
} from '../helpers/provider-gateway';
import { signV4 } from '../../src/providers/bedrock/sigv4';
import { AwsEventStreamParser, encodeEventMessage } from '../../src/transport/aws-eventstream';

const event = (type: string, payload: unknown) =>
  encodeEventMessage(
    { ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' },
    JSON.stringify(payload),
  );

describe('provider: bedrock', () => {
  it("signs with SigV4 exactly as AWS's documented example (GET Object, S3)", () => {
    const h = signV4({
      method: 'GET',
      url: 'https://examplebucket.s3.amazonaws.com/test.txt',
      headers: {
        range: 'bytes=0-9',
        'x-amz-content-sha256': 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      },
      body: '',
      region: 'us-east-1',
      service: 's3',
      credentials: { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' },
      date: new Date(Date.UTC(2013, 4, 24, 0, 0, 0)),
    });
    expect(h.authorization).to.equal(
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
    );
  });

  it('parses the AWS event-stream framing across chunk boundaries and refuses a bad CRC', () => {
    const bytes = Buffer.concat([
      event('messageStart', { role: 'assistant' }),
      event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hi' } }),
    ]);
    const p = new AwsEventStreamParser();
    const out = [];
    for (let i = 0; i < bytes.length; i += 7) out.push(...p.push(bytes.subarray(i, i + 7)));
    expect(out).to.deep.equal([
      { event: 'messageStart', data: '{"role":"assistant"}' },
      { event: 'contentBlockDelta', data: '{"contentBlockIndex":0,"delta":{"text":"Hi"}}' },
    ]);
    const bad = Buffer.from(event('messageStart', {}));
    bad[bad.length - 1] ^= 0xff;
    expect(() => new AwsEventStreamParser().push(bad)).to.throw(/CRC/);
  });

  const rig = useProviderRig(
    'bedrock',
    {
      api_key: undefined,
      options: { region: 'eu-west-1', access_key_id: 'AKIDEXAMPLE', secret_access_key: 'secretEXAMPLE' },
    },
    { model: 'anthropic.claude-3-5-sonnet-20240620-v1:0' },
  );

  it('sends a signed Converse request and parses the answer, tool calls and usage', async () => {
    rig.up.enqueue((_r, res) =>
      sendJson(
        res,
        200,
        converseAnswer(
          [
            { text: 'Let me check.' },
            {
              toolUse: { toolUseId: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', name: 'get_weather', input: { city: 'Paris' } },
            },
          ],
          'tool_use',
          { inputTokens: 30, outputTokens: 12, totalTokens: 42 },
          { metrics: { latencyMs: 700 } },
        ),
      ),
    );
    const c = await rig.client.chat.completions.create({
      model: 'p/m',
      max_tokens: 200,
      temperature: 0.5,
      tools: [weatherTool],
      tool_choice: 'required',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'weather in Paris?' },
      ],
    });
    expect(c.choices[0].finish_reason).to.equal('tool_calls');
    expect(c.choices[0].message.content).to.equal('Let me check.');
    expect(c.choices[0].message.tool_calls).to.deep.equal([
      {
        id: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
      },
    ]);
    expect(c.usage).to.deep.include({ prompt_tokens: 30, completion_tokens: 12 });
    const r = lastRequest(rig);
    expect(r.path).to.equal('/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse');
    expect(String(r.headers.authorization)).to.match(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/bedrock\/aws4_request, SignedHeaders=accept;content-type;host;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$/,
    );
    expect(r.json).to.deep.equal({
      messages: [{ role: 'user', content: [{ text: 'weather in Paris?' }] }],
      system: [{ text: 'Be brief.' }],
      inferenceConfig: { maxTokens: 200, temperature: 0.5 },
      toolConfig: {
        tools: [
          {
            toolSpec: {
              name: 'get_weather',
              description: 'Weather for a city',
              inputSchema: { json: weatherTool.function.parameters },
            },
          },
        ],
        toolChoice: { any: {} },
      },
    });
  });

  it('translates ConverseStream: text, two tool calls with fragments, one finish, usage from metadata', async () => {
    rig.up.enqueue((_r, res) => {
      res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
      for (const m of [
        event('messageStart', { role: 'assistant' }),
        event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Checking' } }),
        event('contentBlockStop', { contentBlockIndex: 0 }),
        event('contentBlockStart', {
          contentBlockIndex: 1,
          start: { toolUse: { toolUseId: 't1', name: 'get_weather' } },
        }),
        event('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '{"city":' } } }),
        event('contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '"Paris"}' } } }),
        event('contentBlockStop', { contentBlockIndex: 1 }),
        event('contentBlockStart', {
          contentBlockIndex: 2,
          start: { toolUse: { toolUseId: 't2', name: 'get_weather' } },
        }),
        event('contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: '{"city":"Rome"}' } } }),
        event('contentBlockStop', { contentBlockIndex: 2 }),
        event('messageStop', { stopReason: 'tool_use' }),
        event('metadata', {
          usage: { inputTokens: 40, outputTokens: 20, totalTokens: 60 },
          metrics: { latencyMs: 900 },
        }),
      ])
        res.write(m);
      res.end();
    });
    const s = await streamWithWeatherTool(rig);
    expect(s.role).to.equal('assistant');
    expect(s.text).to.equal('Checking');
    expect(s.calls).to.deep.equal([
      { id: 't1', name: 'get_weather', args: '{"city":"Paris"}' },
      { id: 't2', name: 'get_weather', args: '{"city":"Rome"}' },
    ]);
    expect(s.finishes).to.deep.equal(['tool_calls']);
    expect(s.usage).to.deep.include({ prompt_tokens: 40, completion_tokens: 20 });
    expect(lastRequest(rig).path).to.equal('/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream');
  });

  it('a mid-stream exception event ends with an error event; error statuses map', async () => {
    rig.up.enqueue((_r, res) => {
      res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
      res.write(event('messageStart', { role: 'assistant' }));
      res.write(event('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'a' } }));
      res.end(
        encodeEventMessage(
          {
            ':exception-type': 'throttlingException',
            ':content-type': 'application/json',
            ':message-type': 'exception',
          },
          JSON.stringify({ message: 'Too many requests, please wait before trying again.' }),
        ),
      );
    });
    const f = await streamFrames(rig);
    expect((JSON.parse(f[f.length - 1]) as { error: { type: string; message: string } }).error).to.include({
      type: 'rate_limit_error',
    });
    rig.up.enqueue((_r, res) =>
      sendJson(
        res,
        400,
        { message: 'Malformed input request: #: required key [messages] not found' },
        { 'x-amzn-errortype': 'ValidationException:http://internal.amazon.com/coral/com.amazon.bedrock/' },
      ),
    );
    expect(
      await rig.client.chat.completions
        .create({ model: 'p/m', messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e),
    ).to.be.instanceOf(OpenAI.BadRequestError);
    rig.up.enqueue((_r, res) => sendJson(res, 429, { message: 'Too many requests' }));
    expect(
      await rig.client.chat.completions
        .create({ model: 'p/m', messages: [{ role: 'user', content: 'x' }] })
        .catch((e: unknown) => e),
    ).to.be.instanceOf(OpenAI.RateLimitError);
  });
});
