import { expect } from 'chai';
import { startTestGateway, testConfig, postJson, sseData, type TestGateway } from '../../helpers/gateway';
import { MockUpstream, openaiFixtures, sendJson, writeSse } from '../../helpers/mock-upstream';
import { within } from '../../helpers/poll';
import { attr, otlpReceiver, type OtlpReceiver, type OtlpSpan } from './otlp';

const SERVER = 2;
const CLIENT = 3;
const ERROR = 2;

/** What the tracing middleware puts on a request's span: content when asked, errors, sampling, the resource. */
describe('tracing: the request span', () => {
  let otlp: OtlpReceiver;
  let up: MockUpstream;
  let gw: TestGateway;
  const send = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    postJson(`${gw.url}/v1/chat/completions`, { model: 'up/model', ...body }, headers);
  /** The SERVER span of the request whose gateway.request_id is `id`, once exported (batches leave every second). */
  const spanOf = async (id: string): Promise<OtlpSpan> => {
    const find = () => otlp.spans.find((s) => s.kind === SERVER && attr(s, 'gateway.request_id') === id);
    expect(await within(5000, () => find() !== undefined), `span of ${id}`).to.equal(true);
    return find() as OtlpSpan;
  };

  before(async () => {
    otlp = await otlpReceiver();
    up = await new MockUpstream().start();
    gw = await startTestGateway(
      testConfig({
        providers: [{ name: 'up', type: 'openai', api_base: `${up.url}/v1` }],
        models: [{ id: 'up/model', deployments: [{ provider: 'up', model: 'gpt-a' }] }],
        plugins: [
          { tracing: { endpoint: otlp.url, capture_content: true, service_name: 'gw-under-test' } },
          'params',
          'routing',
        ],
      }),
    );
  });
  after(async () => {
    await gw.stop();
    await up.stop();
    otlp.server.close();
  });

  it('with capture_content, carries the prompt and the answer, and the id the client got', async () => {
    up.handler = (_r, res) => sendJson(res, 200, openaiFixtures.completion('the answer'));
    const res = await send({ messages: [{ role: 'user', content: 'the question' }] });
    const body = (await res.json()) as { id: string };
    const span = await spanOf(res.headers.get('x-request-id') as string);
    expect(JSON.parse(attr(span, 'gen_ai.input.messages') as string)).to.deep.equal([
      { role: 'user', content: 'the question' },
    ]);
    const output = JSON.parse(attr(span, 'gen_ai.output.messages') as string) as Array<{ content: string }>;
    expect(output.map((m) => m.content)).to.deep.equal(['the answer']);
    expect(attr(span, 'gen_ai.response.id')).to.equal(body.id);
    expect(span.status?.code ?? 0).to.not.equal(ERROR);
    expect(otlp.resources.some((r) => attr({ attributes: r }, 'service.name') === 'gw-under-test')).to.equal(true);
  });

  it("a stream's span gets the streamed text, its finish reasons and usage when the stream ends", async () => {
    up.handler = (_r, res) =>
      writeSse(res, [
        openaiFixtures.chunk({ role: 'assistant', content: 'one' }),
        openaiFixtures.chunk({ content: ' two' }),
        openaiFixtures.chunk({}, 'length'),
        openaiFixtures.usageChunk(5, 2),
      ]);
    const res = await send({ stream: true, messages: [{ role: 'user', content: 'count' }] });
    expect(sseData(await res.text()).pop()).to.equal('[DONE]');
    const span = await spanOf(res.headers.get('x-request-id') as string);
    expect(JSON.parse(attr(span, 'gen_ai.output.messages') as string)).to.deep.equal([
      { role: 'assistant', content: 'one two' },
    ]);
    expect(attr(span, 'gen_ai.response.finish_reasons')).to.deep.equal(['length']);
    expect(attr(span, 'gen_ai.usage.input_tokens')).to.equal(5);
    expect(attr(span, 'gen_ai.usage.output_tokens')).to.equal(2);
    expect(attr(span, 'gen_ai.request.stream')).to.equal(true);
  });

  it("a failed request's span has the error's code as error.type and an error status, from upstream or a plugin", async () => {
    up.handler = (_r, res) => sendJson(res, 500, { error: { message: 'down' } });
    const failed = await send({ messages: [{ role: 'user', content: 'x' }] });
    const upstreamCode = ((await failed.json()) as { error: { code: string } }).error.code;
    const upstreamSpan = await spanOf(failed.headers.get('x-request-id') as string);
    expect(attr(upstreamSpan, 'error.type')).to.equal(upstreamCode);
    expect(upstreamSpan.status?.code).to.equal(ERROR);
    const child = await within(5000, () =>
      otlp.spans.some((s) => s.kind === CLIENT && s.parentSpanId === upstreamSpan.spanId),
    );
    expect(child).to.equal(true);

    const refused = await send({ temperature: 7, messages: [{ role: 'user', content: 'x' }] });
    expect(refused.status).to.equal(400);
    const pluginCode = ((await refused.json()) as { error: { code: string } }).error.code;
    const refusedSpan = await spanOf(refused.headers.get('x-request-id') as string);
    expect(attr(refusedSpan, 'error.type')).to.equal(pluginCode);
    expect(refusedSpan.status?.code).to.equal(ERROR);
    expect(otlp.spans.filter((s) => s.kind === CLIENT && s.parentSpanId === refusedSpan.spanId)).to.deep.equal([]);
  });
});

describe('tracing: sampling', () => {
  it("sample_ratio 0 exports no new trace, and still follows a client's sampled traceparent", async () => {
    const otlp = await otlpReceiver();
    const up = await new MockUpstream().start();
    up.handler = (_r, res) => sendJson(res, 200, openaiFixtures.completion('ok'));
    const gw = await startTestGateway(
      testConfig({
        providers: [{ name: 'up', type: 'openai', api_base: `${up.url}/v1` }],
        models: [{ id: 'up/model', deployments: [{ provider: 'up', model: 'gpt-a' }] }],
        plugins: [{ tracing: { endpoint: otlp.url, sample_ratio: 0 } }, 'routing'],
      }),
    );
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    try {
      const chat = { model: 'up/model', messages: [{ role: 'user', content: 'x' }] };
      for (let i = 0; i < 3; i++) await (await postJson(`${gw.url}/v1/chat/completions`, chat)).text();
      const followed = await postJson(`${gw.url}/v1/chat/completions`, chat, {
        traceparent: `00-${traceId}-b7ad6b7169203331-01`,
      });
      await followed.text();
      // The upstream got the trace either way: a sampled one for the client's, an unsampled one otherwise.
      const flags = up.requests.map((r) => String(r.headers.traceparent).split('-')[3]);
      expect(flags).to.deep.equal(['00', '00', '00', '01']);
    } finally {
      await gw.stop(); // flushes the batch processor
      await up.stop();
      otlp.server.close();
    }
    expect(otlp.spans.length).to.be.greaterThan(0);
    expect(otlp.spans.every((s) => s.traceId === traceId)).to.equal(true);
    expect(otlp.spans.filter((s) => s.kind === SERVER)).to.have.length(1);
  });
});
