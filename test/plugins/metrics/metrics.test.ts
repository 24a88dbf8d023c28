import { expect } from 'chai';
import { createServer } from 'node:net';
import { startTestGateway, testConfig, postJson, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, makeAccountKey } from '../../helpers/accounts';
import { modulesLoadedBy } from '../../helpers/process';
import { MockUpstream, sendJson } from '../../helpers/mock-upstream';
import { series, value } from './scrape';

const MODEL = 'mock/gpt-4o-mini';

describe('metrics', () => {
  let gw: TestGateway;
  let up: MockUpstream;
  let key: string;
  before(async () => {
    up = await new MockUpstream().start();
    up.handler = (_req, res) => sendJson(res, 503, { error: { message: 'down' } });
    const base = testConfig();
    gw = await startTestGateway(
      testConfig(
        {
          providers: [...base.providers, { name: 'up', type: 'openai', api_base: `${up.url}/v1` }],
          models: [...base.models, { id: 'up/broken', deployments: [{ provider: 'up', model: 'x' }] }],
          plugins: ['metrics', 'auth', 'credit', 'storage', 'routing'],
        },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
    key = (await makeAccountKey(gw, { credits: 10 })).key;
  });
  after(async () => {
    await gw.stop();
    await up.stop();
  });
  const scrape = async () => (await fetch(`${gw.url}/metrics`)).text();
  const ask = (body: Record<string, unknown>) =>
    postJson(
      `${gw.url}/v1/chat/completions`,
      { model: MODEL, messages: [{ role: 'user', content: 'hello metrics' }], ...body },
      { authorization: `Bearer ${key}` },
    );

  it('counts known traffic exactly: requests by model/provider/status/streamed, tokens, credits, histogram buckets', async () => {
    const before = await scrape();
    const plain = (await (await ask({})).json()) as {
      usage: { prompt_tokens: number; completion_tokens: number; cost: number };
    };
    await ask({});
    await ask({});
    const streamed = await (await ask({ stream: true, stream_options: { include_usage: true } })).text();
    expect((await ask({ model: 'up/broken' })).status).to.equal(502);
    const after = await scrape();
    const delta = (name: string, ...parts: string[]) => value(after, name, ...parts) - value(before, name, ...parts);
    expect(
      delta('gateway_requests_total', `model="${MODEL}"`, 'provider="mock"', 'status_class="2xx"', 'streamed="false"'),
    ).to.equal(3);
    expect(delta('gateway_requests_total', `model="${MODEL}"`, 'status_class="2xx"', 'streamed="true"')).to.equal(1);
    expect(delta('gateway_requests_total', 'model="up/broken"', 'provider="up"', 'status_class="5xx"')).to.equal(1);
    expect(delta('gateway_upstream_errors_total', 'provider="up"', 'code="upstream_error"')).to.equal(1);
    expect(delta('gateway_tokens_total', `model="${MODEL}"`, 'type="prompt"')).to.equal(4 * plain.usage.prompt_tokens);
    expect(delta('gateway_tokens_total', `model="${MODEL}"`, 'type="completion"')).to.equal(
      4 * plain.usage.completion_tokens,
    );
    expect(delta('gateway_credits_charged_total', `model="${MODEL}"`)).to.be.closeTo(4 * plain.usage.cost, 1e-12);
    // histograms: each request observed once; the +Inf bucket equals the count.
    expect(delta('gateway_request_duration_seconds_count', `model="${MODEL}"`, 'streamed="false"')).to.equal(3);
    expect(
      delta('gateway_request_duration_seconds_bucket', `model="${MODEL}"`, 'streamed="false"', 'le="+Inf"'),
    ).to.equal(3);
    expect(
      delta('gateway_request_duration_seconds_bucket', `model="${MODEL}"`, 'streamed="false"', 'le="60"'),
    ).to.equal(3);
    expect(delta('gateway_time_to_first_token_seconds_count', `model="${MODEL}"`)).to.equal(1);
    expect(delta('gateway_added_latency_seconds_count', `model="${MODEL}"`)).to.equal(4);
    expect(delta('gateway_plugin_duration_seconds_count', 'plugin="credit"')).to.equal(5); // the 502 passed credit too
    expect(value(after, 'gateway_requests_in_flight')).to.equal(0);
    expect(value(after, 'gateway_open_streams')).to.equal(0);
    expect(delta('gateway_store_operation_seconds_count', 'op="tx"')).to.be.greaterThan(0);
    expect(delta('gateway_http_requests_total', 'route="/v1/chat/completions"', 'method="POST"')).to.equal(5);
    expect(streamed).to.include('[DONE]');
    expect(after).to.match(/^process_cpu_user_seconds_total /m);
  });

  it("exports prom-client's default metrics by their names, without loading OpenTelemetry's API", async () => {
    const text = await scrape();
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_cpu_system_seconds_total',
      'process_cpu_seconds_total',
      'process_start_time_seconds',
      'process_resident_memory_bytes',
      'process_open_fds',
      'nodejs_eventloop_lag_seconds',
      'nodejs_active_handles_total',
      'nodejs_heap_size_total_bytes',
      'nodejs_heap_space_size_used_bytes',
      'nodejs_version_info',
      'nodejs_gc_duration_seconds',
    ])
      expect(text, name).to.match(new RegExp(`^# TYPE ${name} `, 'm'));
    // The CPU counters count this process's CPU time: user + system = total, and they grow.
    const user = value(text, 'process_cpu_user_seconds_total');
    const system = value(text, 'process_cpu_system_seconds_total');
    expect(user).to.be.greaterThan(0);
    expect(value(text, 'process_cpu_seconds_total')).to.be.closeTo(user + system, 1e-6);
    const spin = Date.now() + 50;
    while (Date.now() < spin); // CPU time for the next scrape to count
    expect(value(await scrape(), 'process_cpu_seconds_total')).to.be.greaterThan(user + system);
    expect(modulesLoadedBy(['./src/app', './plugins/metrics'], '@opentelemetry/api')).to.deep.equal([]);
  });

  it('10,000 random model names and unknown keys add zero series', async () => {
    // One request of the same kind first, so that its (bounded) label combination exists before.
    await postJson(
      `${gw.url}/v1/chat/completions`,
      { model: 'warm/up', messages: [] },
      { authorization: 'Bearer sk-gw-0' },
    );
    const before = series(await scrape());
    const names = Array.from({ length: 10000 }, (_, i) => `rnd/${i}-${Math.random().toString(36).slice(2)}`);
    for (let i = 0; i < names.length; i += 500) {
      await Promise.all(
        names
          .slice(i, i + 500)
          .map((model) =>
            postJson(
              `${gw.url}/v1/chat/completions`,
              { model, messages: [] },
              { authorization: `Bearer sk-gw-${i}` },
            ).then((r) => r.arrayBuffer()),
          ),
      );
    }
    const after = await scrape();
    expect(series(after)).to.deep.equal(before);
    expect(after).to.not.include('rnd/');
  });
});

describe('metrics endpoint protection', () => {
  it('a bearer token guards /metrics', async () => {
    const gw = await startTestGateway(
      testConfig({ plugins: [{ metrics: { token: 'scrape-secret-123' } }, 'routing'] }),
    );
    try {
      expect((await fetch(`${gw.url}/metrics`)).status).to.equal(401);
      expect(
        (await fetch(`${gw.url}/metrics`, { headers: { authorization: 'Bearer wrong-token-00' } })).status,
      ).to.equal(401);
      const ok = await fetch(`${gw.url}/metrics`, { headers: { authorization: 'Bearer scrape-secret-123' } });
      expect(ok.status).to.equal(200);
      expect(await ok.text()).to.include('gateway_requests_total');
    } finally {
      await gw.stop();
    }
  });

  it('or serves it on a separate port only', async () => {
    const port = await new Promise<number>((r) => {
      const s = createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => r(p));
      });
    });
    const gw = await startTestGateway(testConfig({ plugins: [{ metrics: { port } }, 'routing'] }));
    try {
      expect((await fetch(`${gw.url}/metrics`)).status).to.equal(404);
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(res.status).to.equal(200);
      expect(await res.text()).to.include('gateway_plugin_duration_seconds');
    } finally {
      await gw.stop();
    }
  });
});
