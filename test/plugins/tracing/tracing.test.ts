import { expect } from 'chai';
import { startTestGateway, testConfig, postJson } from '../../helpers/gateway';
import { MockUpstream, openaiFixtures, sendJson, writeSse } from '../../helpers/mock-upstream';
import { modulesLoadedBy } from '../../helpers/process';
import { attr, otlpReceiver } from './otlp';

describe('tracing (OpenTelemetry, OTLP/HTTP)', () => {
  it('one span per request, a child per upstream attempt, GenAI attributes, traceparent continued and forwarded', async () => {
    const otlp = await otlpReceiver();
    const up = await new MockUpstream().start();
    const gw = await startTestGateway(
      testConfig({
        providers: [
          { name: 'up', type: 'openai', api_base: `${up.url}/v1` },
          { name: 'up2', type: 'openai', api_base: `${up.url}/v1` },
        ],
        models: [
          {
            id: 'up/model',
            deployments: [
              { provider: 'up', model: 'gpt-a' },
              { provider: 'up2', model: 'gpt-b', weight: 0.000001 },
            ],
          },
        ],
        plugins: ['metrics', { tracing: { endpoint: otlp.url, capture_content: false } }, 'fallback', 'routing'],
      }),
    );
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const clientSpan = '00f067aa0ba902b7';
    try {
      // First attempt fails (503, retryable): routing moves to the second deployment.
      let first = true;
      up.handler = (_req, res) => {
        if (first) {
          first = false;
          return sendJson(res, 503, { error: { message: 'busy' } });
        }
        return sendJson(res, 200, openaiFixtures.completion('traced'));
      };
      const res = await postJson(
        `${gw.url}/v1/chat/completions`,
        {
          model: 'up/model',
          temperature: 0.5,
          max_tokens: 20,
          messages: [{ role: 'user', content: 'secret prompt text' }],
        },
        { traceparent: `00-${traceId}-${clientSpan}-01` },
      );
      expect(res.status).to.equal(200);
      up.handler = (_req, res) =>
        writeSse(res, [
          openaiFixtures.chunk({ role: 'assistant', content: 'hi' }),
          openaiFixtures.chunk({}, 'stop'),
          openaiFixtures.usageChunk(3, 1),
        ]);
      await (
        await postJson(`${gw.url}/v1/chat/completions`, {
          model: 'up/model',
          stream: true,
          messages: [{ role: 'user', content: 'x' }],
        })
      ).text();
    } finally {
      await gw.stop(); // flushes the batch processor
      await up.stop();
      otlp.server.close();
    }
    const requests = otlp.spans.filter((s) => s.kind === 2); // SERVER
    const attempts = otlp.spans.filter((s) => s.kind === 3); // CLIENT
    expect(requests).to.have.length(2);
    const plain = requests.find((s) => s.traceId === traceId)!;
    expect(plain.parentSpanId).to.equal(clientSpan);
    expect(plain.name).to.equal('chat up/model');
    expect(attr(plain, 'gen_ai.operation.name')).to.equal('chat');
    expect(attr(plain, 'gen_ai.request.model')).to.equal('up/model');
    expect(attr(plain, 'gen_ai.response.model')).to.equal('up/model');
    expect(attr(plain, 'gen_ai.provider.name')).to.equal('up2');
    expect(attr(plain, 'gen_ai.usage.input_tokens')).to.equal(19);
    expect(attr(plain, 'gen_ai.usage.output_tokens')).to.equal(10);
    expect(attr(plain, 'gen_ai.request.temperature')).to.equal(0.5);
    expect(attr(plain, 'gen_ai.response.finish_reasons')).to.deep.equal(['stop']);
    expect(JSON.stringify(otlp.spans)).to.not.include('secret prompt text'); // content only when opted in
    const children = attempts.filter((s) => s.traceId === traceId);
    expect(children).to.have.length(2);
    for (const c of children) expect(c.parentSpanId).to.equal(plain.spanId);
    const failed = children.find((c) => attr(c, 'error.type'));
    expect(attr(failed!, 'error.type')).to.equal('upstream_error');
    // The upstream got a traceparent naming the attempt's span, in the client's trace.
    const sent = up.requests.slice(0, 2).map((r) => r.headers.traceparent as string);
    expect(sent.map((h) => h.split('-')[1])).to.deep.equal([traceId, traceId]);
    expect(sent.map((h) => h.split('-')[2]).sort()).to.deep.equal(children.map((c) => c.spanId).sort());
    // One span per plugin the request passed, under the request's span.
    const pluginSpans = otlp.spans.filter((s) => s.traceId === traceId && s.name.startsWith('plugin '));
    expect(pluginSpans.map((s) => s.name).sort()).to.deep.equal([
      'plugin fallback',
      'plugin metrics',
      'plugin routing',
    ]);
    for (const p of pluginSpans) expect(p.parentSpanId).to.equal(plain.spanId);
    const streamed = requests.find((s) => s.traceId !== traceId)!;
    expect(streamed.parentSpanId ?? '').to.equal('');
    expect(attr(streamed, 'gen_ai.usage.output_tokens')).to.equal(1);
    expect(attr(streamed, 'gen_ai.request.stream')).to.equal(true);
  });

  it('without the tracing plugin no OpenTelemetry SDK is loaded', async () => {
    const gw = await startTestGateway(testConfig());
    try {
      await postJson(`${gw.url}/v1/chat/completions`, {
        model: 'mock/gpt-4o-mini',
        messages: [{ role: 'user', content: 'x' }],
      });
      expect(modulesLoadedBy(['./src/app', './plugins/routing'], 'sdk-trace-base')).to.deep.equal([]);
    } finally {
      await gw.stop();
    }
  });
});
