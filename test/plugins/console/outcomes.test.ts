import { expect } from 'chai';
import { postJson, startTestGateway, testConfig, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../../helpers/accounts';
import { MockUpstream, openaiFixtures, sendJson } from '../../helpers/mock-upstream';
import { within } from '../../helpers/poll';

/**
 * Every outcome counted (issue 49): a success, an upstream error, a stream cut by the idle timeout (stored as
 * incomplete: it must count as a timeout and an error), a cancelled stream, and the gateway's own refusals (a bad key,
 * a bad body, a rate limit, no credit: light records from the outer error writer), each in the overview's totals,
 * in the error rate, and findable with the activity filter.
 */
describe('console: every outcome counted', function () {
  this.timeout(60_000);
  let up: MockUpstream;
  let gw: TestGateway;
  let cookie = '';
  const get = async (path: string) => {
    const r = await fetch(`${gw.url}/console/api/${path}`, { headers: { cookie } });
    expect(r.status, path).to.equal(200);
    return (await r.json()) as Record<string, unknown>;
  };
  const chat = (key: string, body: Record<string, unknown>) =>
    postJson(`${gw.url}/v1/chat/completions`, body, { authorization: `Bearer ${key}` });
  const ask = { model: 'm/up', messages: [{ role: 'user', content: 'hi' }] };

  before(async () => {
    up = await new MockUpstream().start();
    gw = await startTestGateway(
      testConfig(
        {
          providers: [{ name: 'up', type: 'openai', api_base: `${up.url}/v1` }],
          models: [
            {
              id: 'm/up',
              pricing: { prompt: 0.000001, completion: 0.000001 },
              deployments: [{ provider: 'up', model: 'x' }],
            },
          ],
          plugins: [
            'auth',
            'console',
            { limits: { key: { rpm: 5 } } },
            'credit',
            { routing: { stream_idle_timeout_ms: 300 } },
          ],
        },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
    const res = await postJson(`${gw.url}/console/api/session`, { key: ADMIN_KEY });
    cookie = (res.headers.get('set-cookie') ?? '').split(';')[0];
  });
  after(async () => {
    await gw?.stop();
    await up?.stop();
  });

  it('success, upstream error, timeout, cancelled and four refusals: each counted, filterable, in the error rate', async () => {
    const a = await makeAccountKey(gw, { credits: 10 });
    const poor = await makeAccountKey(gw, { credits: 0 });
    up.handler = (_r, res) => sendJson(res, 200, openaiFixtures.completion('fine'));
    expect((await chat(a.key, ask)).status).to.equal(200);
    up.handler = (_r, res) => sendJson(res, 500, { error: { message: 'boom' } });
    expect((await chat(a.key, ask)).status).to.be.within(500, 599);
    // A stream that stalls after content: it ends with an upstream_timeout error event.
    up.handler = (_r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(openaiFixtures.chunk({ role: 'assistant', content: 'part' }))}\n\n`);
    };
    expect(await (await chat(a.key, { ...ask, stream: true })).text()).to.include('upstream_timeout');
    // A stream its client leaves after the first chunk.
    up.handler = (_r, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify(openaiFixtures.chunk({ role: 'assistant', content: 'slow' }))}\n\n`);
    };
    const leaving = new AbortController();
    const cancelled = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...ask, stream: true }),
      signal: leaving.signal,
    });
    await cancelled.body!.getReader().read();
    leaving.abort();
    // The gateway's refusals: a wrong key, a body without messages, no credit, past the key's 5 requests a minute.
    expect((await chat('sk-gw-not-a-real-key', ask)).status).to.equal(401);
    expect((await chat(a.key, { model: 'm/up' })).status).to.equal(400);
    expect((await chat(poor.key, ask)).status).to.equal(402);
    up.handler = (_r, res) => sendJson(res, 200, openaiFixtures.completion('fine'));
    let limited = 0;
    for (let i = 0; i < 3 && limited === 0; i++) if ((await chat(a.key, ask)).status === 429) limited++;
    expect(limited).to.equal(1);

    let all: Record<string, number> = {};
    const counted = await within(10_000, async () => {
      all = (await get('overview?window=15m')).totals as Record<string, number>;
      return all.client_errors === 4 && all.cancelled === 1;
    });
    expect(counted, JSON.stringify(all)).to.equal(true);
    const ok = all.requests - all.errors - all.cancelled;
    expect(all).to.include({ timeouts: 1, upstream_errors: 1, client_errors: 4, cancelled: 1 });
    expect(all.errors).to.equal(6);
    expect(ok).to.be.at.least(2);
    const byOutcome = async (o: string) =>
      ((await get(`records?outcome=${o}&limit=50`)).data as Array<Record<string, unknown>>).map((r) => [
        r.outcome,
        r.error_code,
        r.http_status,
      ]);
    expect(await byOutcome('timeout')).to.deep.equal([['timeout', 'upstream_timeout', null]]);
    expect((await byOutcome('client_error')).map((r) => r[2]).sort()).to.deep.equal([400, 401, 402, 429]);
    expect(await byOutcome('cancelled')).to.have.length(1);
    expect(await byOutcome('error')).to.have.length(6);
    // The refused requests of an account are its own: it sees its 400 and 429, not the wrong key's 401.
    const mine = await adminCall(gw, 'GET', `/v1/activity?account_id=${a.accountId}`);
    expect(mine.status).to.equal(200);
  });
});
