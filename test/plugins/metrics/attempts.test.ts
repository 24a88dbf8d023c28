import { expect } from 'chai';
import { startTestGateway, testConfig, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, makeAccountKey } from '../../helpers/accounts';
import { MockUpstream, openaiFixtures, sendJson, writeSse } from '../../helpers/mock-upstream';
import { within } from '../../helpers/poll';
import { value } from './scrape';

/** What the metrics middleware counts around the plugins after it: attempts, fallbacks, streams, keys. */
describe('metrics: attempts, fallbacks, streams and keys', () => {
  let a: MockUpstream;
  let b: MockUpstream;
  let gw: TestGateway;
  let key: string;
  let hash: string;
  const scrape = async () => (await fetch(`${gw.url}/metrics`)).text();
  const send = (model: string, extra: Record<string, unknown> = {}, signal?: AbortSignal) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], ...extra }),
      signal,
    });
  /** Each metric's change between two scrapes. */
  const changes =
    (before: string, after: string) =>
    (name: string, ...parts: string[]) =>
      value(after, name, ...parts) - value(before, name, ...parts);

  before(async () => {
    a = await new MockUpstream().start();
    b = await new MockUpstream().start();
    gw = await startTestGateway(
      testConfig(
        {
          providers: [
            { name: 'a', type: 'openai', api_base: `${a.url}/v1` },
            { name: 'b', type: 'openai', api_base: `${b.url}/v1` },
          ],
          models: [
            { id: 'm/flaky', deployments: [{ provider: 'a', model: 'a-model' }] },
            { id: 'm/backup', deployments: [{ provider: 'b', model: 'b-model' }] },
          ],
          plugins: [
            { metrics: { key_label: true } },
            'auth',
            {
              fallback: {
                num_retries: 1,
                backoff_base_ms: 1,
                backoff_max_ms: 2,
                cooldown: { failures: 100, window_ms: 1000, cooldown_ms: 1000 },
              },
            },
            'routing',
          ],
        },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
    ({ key, hash } = await makeAccountKey(gw));
  });
  beforeEach(() => {
    a.handler = (_r, res) => sendJson(res, 503, { error: { message: 'busy' } });
    b.handler = (_r, res) => sendJson(res, 200, openaiFixtures.completion('from b'));
  });
  after(async () => {
    await gw.stop();
    await a.stop();
    await b.stop();
  });

  it('counts each attempt by provider and outcome, the retries and the fallback that answered, under the key', async () => {
    const before = await scrape();
    const res = await send('m/flaky', { fallbacks: ['m/backup'] });
    expect(res.status).to.equal(200);
    const delta = changes(before, await scrape());
    const prefix = `key="${hash.slice(0, 12)}"`;
    expect(delta('gateway_upstream_attempts_total', 'provider="a"', 'outcome="error"')).to.equal(2);
    expect(delta('gateway_upstream_attempts_total', 'provider="b"', 'outcome="ok"')).to.equal(1);
    expect(delta('gateway_upstream_errors_total', 'provider="a"', 'code="upstream_error"')).to.equal(2);
    expect(delta('gateway_upstream_latency_seconds_count', 'provider="b"')).to.equal(1);
    expect(delta('gateway_upstream_latency_seconds_count', 'provider="a"')).to.equal(0);
    expect(delta('gateway_retries_total', 'model="m/flaky"')).to.equal(2);
    expect(delta('gateway_fallbacks_total', 'model="m/flaky"')).to.equal(1);
    expect(delta('gateway_key_extra_attempts_total', prefix)).to.equal(2);
    // The request is counted under the model asked for, the provider that answered, and the key's prefix.
    expect(
      delta(
        'gateway_requests_total',
        'model="m/flaky"',
        'provider="b"',
        'status_class="2xx"',
        'streamed="false"',
        prefix,
      ),
    ).to.equal(1);
    for (const plugin of ['auth', 'fallback', 'routing'])
      expect(delta('gateway_plugin_duration_seconds_count', `plugin="${plugin}"`), plugin).to.equal(1);
  });

  it('a request that fails everywhere is counted with its status class and the last provider tried', async () => {
    const before = await scrape();
    expect((await send('m/flaky')).status).to.equal(502);
    const after = await scrape();
    const delta = changes(before, after);
    expect(delta('gateway_requests_total', 'model="m/flaky"', 'provider="a"', 'status_class="5xx"')).to.equal(1);
    expect(delta('gateway_retries_total', 'model="m/flaky"')).to.equal(1);
    expect(delta('gateway_fallbacks_total', 'model="m/flaky"')).to.equal(0);
    expect(delta('gateway_request_duration_seconds_count', 'model="m/flaky"')).to.equal(0); // only answered ones
    expect(value(after, 'gateway_requests_in_flight')).to.equal(0);
  });

  it('a stream: time to first token, gaps between chunks, tokens from its usage chunk, closed when it ends', async () => {
    b.handler = (_r, res) =>
      writeSse(res, [
        openaiFixtures.chunk({ role: 'assistant', content: 'one' }),
        openaiFixtures.chunk({ content: ' two' }),
        openaiFixtures.chunk({}, 'stop'),
        openaiFixtures.usageChunk(7, 3),
      ]);
    const before = await scrape();
    const text = await (await send('m/backup', { stream: true, stream_options: { include_usage: true } })).text();
    expect(text).to.include('[DONE]');
    const after = await scrape();
    const delta = changes(before, after);
    expect(delta('gateway_time_to_first_token_seconds_count', 'model="m/backup"')).to.equal(1);
    expect(delta('gateway_inter_token_seconds_count', 'model="m/backup"')).to.equal(2);
    expect(delta('gateway_request_duration_seconds_count', 'model="m/backup"', 'streamed="true"')).to.equal(1);
    expect(delta('gateway_tokens_total', 'model="m/backup"', 'type="prompt"')).to.equal(7);
    expect(delta('gateway_tokens_total', 'model="m/backup"', 'type="completion"')).to.equal(3);
    expect(
      delta('gateway_requests_total', 'model="m/backup"', 'provider="b"', 'status_class="2xx"', 'streamed="true"'),
    ).to.equal(1);
    expect(value(after, 'gateway_open_streams')).to.equal(0);
    expect(value(after, 'gateway_requests_in_flight')).to.equal(0);
  });

  it('a stream whose chunks came in one read (a run to the observers) counts every gap between them', async () => {
    const chunks = [
      openaiFixtures.chunk({ role: 'assistant', content: '' }),
      ...Array.from({ length: 40 }, (_, i) => openaiFixtures.chunk({ content: ` w${i}` })),
      openaiFixtures.chunk({}, 'stop'),
    ];
    // One write: the gateway reads it in one go, and its text chunks reach the read-only observers as one run.
    b.handler = (_r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`${chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('')}data: [DONE]\n\n`);
    };
    const before = await scrape();
    const text = await (await send('m/backup', { stream: true })).text();
    expect(text).to.include('" w39"');
    const delta = changes(before, await scrape());
    expect(delta('gateway_inter_token_seconds_count', 'model="m/backup"')).to.equal(chunks.length - 1);
  });

  it('a stream the client leaves is counted as 499 (4xx) once it ends, and leaves no open stream behind', async () => {
    b.handler = async (_r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(openaiFixtures.chunk({ role: 'assistant', content: 'first' }))}\n\n`);
      await new Promise<void>((r) => res.on('close', () => r()));
    };
    const before = await scrape();
    const leave = new AbortController();
    const res = await send('m/backup', { stream: true }, leave.signal);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    expect(value(await scrape(), 'gateway_open_streams')).to.equal(1);
    leave.abort();
    await reader.read().catch(() => undefined);
    let after = '';
    const counted = await within(3000, async () => {
      after = await scrape();
      return value(after, 'gateway_open_streams') === 0;
    });
    expect(counted).to.equal(true);
    const delta = changes(before, after);
    expect(delta('gateway_requests_total', 'model="m/backup"', 'status_class="4xx"', 'streamed="true"')).to.equal(1);
    expect(value(after, 'gateway_requests_in_flight')).to.equal(0);
  });

  it('counts the HTTP requests of every route by its pattern, the chat route among them', async () => {
    const before = await scrape();
    await send('m/backup');
    await fetch(`${gw.url}/v1/keys/${hash}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    const after = await scrape();
    const delta = changes(before, after);
    expect(delta('gateway_http_requests_total', 'route="/v1/chat/completions"', 'method="POST"')).to.equal(1);
    expect(
      delta('gateway_http_requests_total', 'route="/v1/keys/:hash"', 'method="GET"', 'status_class="2xx"'),
    ).to.equal(1);
    expect(after).to.not.include(hash.slice(12, 40)); // a key's hash is cut to its prefix, and paths are patterns
  });
});
