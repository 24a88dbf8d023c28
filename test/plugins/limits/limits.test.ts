import { expect } from 'chai';
import { MOCK_MODEL, startTestGateway, testConfig, postJson, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../../helpers/accounts';
import { MockUpstream, sendJson, openaiFixtures } from '../../helpers/mock-upstream';
import { generateKey } from '../../../src/auth/key-format';
import { RATE_HEADERS, TOKEN_HEADERS, upstreamModel, upstreamProvider } from './helpers';

const chat = (gw: TestGateway, key: string, body: Record<string, unknown> = {}) =>
  postJson(
    `${gw.url}/v1/chat/completions`,
    { model: 'mock/gpt-4o-mini', messages: [{ role: 'user', content: 'Hello there' }], ...body },
    { authorization: `Bearer ${key}` },
  );

describe('limits plugin (one process, memory counters)', function () {
  this.timeout(20000);
  const allowedUp = new MockUpstream();
  const deniedUp = new MockUpstream();
  let gw: TestGateway;

  before(async () => {
    await allowedUp.start();
    await deniedUp.start();
    allowedUp.handler = (_r, res) => sendJson(res, 500, { error: { message: 'overloaded', type: 'server_error' } });
    deniedUp.handler = (_r, res) => sendJson(res, 200, openaiFixtures.completion('from the denied model'));
    gw = await startTestGateway(
      testConfig(
        {
          providers: [
            { name: 'mock', type: 'mock' },
            upstreamProvider('allowed', allowedUp),
            upstreamProvider('denied', deniedUp),
          ],
          models: [
            { ...MOCK_MODEL, pricing: { prompt: 0, completion: 0 } },
            upstreamModel('mock/on-upstream', 'allowed'),
            upstreamModel('other/model', 'denied'),
          ],
          plugins: [
            'auth',
            { fallback: { num_retries: 0 } },
            { limits: { auth_failures: { max: 5, window_ms: 60000 } } },
            'routing',
          ],
        },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
  });
  after(async () => {
    await gw.stop();
    await allowedUp.stop();
    await deniedUp.stop();
  });

  it("admits exactly the key's requests per minute; refusals are 429 with Retry-After and the x-ratelimit headers, answers carry them too", async () => {
    const { key, hash } = await makeAccountKey(gw);
    const set = await adminCall(gw, 'PUT', `/v1/keys/${hash}/limits`, { rate_limits: { rpm: 7 } });
    expect(set.status).to.equal(200);
    expect(set.body.data).to.deep.equal({ allowed_models: null, rate_limits: { rpm: 7 }, budget_alerts: null });
    const answers = await Promise.all(Array.from({ length: 12 }, () => chat(gw, key)));
    const ok = answers.filter((r) => r.status === 200);
    const refused = answers.filter((r) => r.status === 429);
    expect(ok).to.have.length(7);
    expect(refused).to.have.length(5);
    for (const r of answers) for (const h of RATE_HEADERS) expect(r.headers.get(h), h).to.be.a('string');
    expect(ok.map((r) => Number(r.headers.get('x-ratelimit-remaining-requests'))).sort((a, b) => a - b)).to.deep.equal([
      0, 1, 2, 3, 4, 5, 6,
    ]);
    for (const r of refused) {
      expect(r.headers.get('x-ratelimit-limit-requests')).to.equal('7');
      expect(r.headers.get('x-ratelimit-remaining-requests')).to.equal('0');
      const retry = Number(r.headers.get('retry-after'));
      expect(retry).to.be.within(1, 60);
      const body = (await r.json()) as { error: { code: string; type: string } };
      expect(body.error).to.include({ code: 'rate_limit_exceeded', type: 'rate_limit_error' });
    }
    // Another key is not affected.
    const other = await makeAccountKey(gw);
    expect((await chat(gw, other.key)).status).to.equal(200);
  });

  it('reserves tokens per minute from the request bound and settles to the real count', async () => {
    const { key, hash } = await makeAccountKey(gw);
    await adminCall(gw, 'PUT', `/v1/keys/${hash}/limits`, { rate_limits: { tpm: 1000 } });
    const first = await chat(gw, key, { max_tokens: 400 });
    expect(first.status).to.equal(200);
    for (const h of TOKEN_HEADERS) expect(first.headers.get(h), h).to.be.a('string');
    const bound = 1000 - Number(first.headers.get('x-ratelimit-remaining-tokens'));
    expect(bound).to.be.greaterThan(400);
    const used = ((await first.json()) as { usage: { total_tokens: number } }).usage.total_tokens;
    expect(used).to.be.lessThan(bound);
    // Settled to the real count: the next request sees the window hold `used`, not the bound.
    const second = await chat(gw, key, { max_tokens: 400 });
    expect(second.status).to.equal(200);
    expect(1000 - Number(second.headers.get('x-ratelimit-remaining-tokens'))).to.equal(used + bound);
    // A bound larger than the whole limit is refused with a message that says so.
    const big = await chat(gw, key, { max_tokens: 5000 });
    expect(big.status).to.equal(429);
    expect(((await big.json()) as { error: { message: string } }).error.message).to.match(/lower max_tokens/);
  });

  it('allowlist: 403 naming the model, /v1/models filtered, a disallowed fallback never reaches its upstream', async () => {
    const { key, hash, accountId } = await makeAccountKey(gw);
    expect((await adminCall(gw, 'PUT', `/v1/keys/${hash}/limits`, { allowed_models: ['mock/*'] })).status).to.equal(
      200,
    );
    const refused = await chat(gw, key, { model: 'other/model' });
    expect(refused.status).to.equal(403);
    const err = ((await refused.json()) as { error: { code: string; message: string; param: string } }).error;
    expect(err.code).to.equal('model_not_allowed');
    expect(err.message).to.contain('other/model');
    expect(err.param).to.equal('model');

    const listed = (await (
      await fetch(`${gw.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })
    ).json()) as { data: Array<{ id: string }> };
    expect(listed.data.map((m) => m.id).sort()).to.deep.equal(['mock/gpt-4o-mini', 'mock/on-upstream']);
    const all = (await (await fetch(`${gw.url}/v1/models`)).json()) as { data: unknown[] };
    expect(all.data).to.have.length(3);
    expect(
      (await fetch(`${gw.url}/v1/models/other/model`, { headers: { authorization: `Bearer ${key}` } })).status,
    ).to.equal(403);

    const before = deniedUp.requests.length;
    const viaFallback = await chat(gw, key, { model: 'mock/on-upstream', fallbacks: ['other/model'] });
    const viaModels = await chat(gw, key, { model: 'mock/on-upstream', models: ['mock/on-upstream', 'other/model'] });
    expect(viaFallback.status).to.equal(502);
    expect(viaModels.status).to.equal(502);
    expect(deniedUp.requests.length).to.equal(before);
    expect(allowedUp.requests.length).to.be.greaterThan(0);

    // The account's list narrows too: a key may use only what both allow.
    await adminCall(gw, 'PUT', `/v1/accounts/${accountId}/limits`, { allowed_models: ['mock/on-upstream'] });
    const other = await adminCall(gw, 'POST', '/v1/keys', { name: 'k2', account_id: accountId });
    expect((await chat(gw, other.body.key as string)).status).to.equal(403);
  });

  it('admin API validates the settings and answers 404 for unknown keys and accounts', async () => {
    const { hash, key } = await makeAccountKey(gw);
    expect((await adminCall(gw, 'PUT', `/v1/keys/${hash}/limits`, { rate_limits: { rpm: -1 } })).status).to.equal(400);
    expect((await adminCall(gw, 'PUT', `/v1/keys/${hash}/limits`, { allowed: [] })).status).to.equal(400);
    expect((await adminCall(gw, 'PUT', `/v1/keys/${'0'.repeat(64)}/limits`, { allowed_models: [] })).status).to.equal(
      404,
    );
    expect((await adminCall(gw, 'GET', '/v1/accounts/acct_nope/limits')).status).to.equal(404);
    expect((await adminCall(gw, 'GET', `/v1/keys/${hash}/limits`, undefined, key)).status).to.equal(403);
  });

  it('throttles failed authentications per client address, valid keys from it included, with Retry-After', async () => {
    const { key } = await makeAccountKey(gw);
    for (let i = 0; i < 5; i++) expect((await chat(gw, generateKey())).status).to.equal(401);
    const blocked = await chat(gw, generateKey());
    expect(blocked.status).to.equal(429);
    expect(Number(blocked.headers.get('retry-after'))).to.be.within(1, 60);
    expect(((await blocked.json()) as { error: { code: string } }).error.code).to.equal(
      'too_many_failed_authentications',
    );
    expect((await chat(gw, key)).status).to.equal(429);
    expect((await adminCall(gw, 'GET', '/v1/accounts')).status).to.equal(429);
  });
});

describe('limits from config: per model across keys, per key x model, plans', function () {
  this.timeout(20000);
  let gw: TestGateway;
  before(async () => {
    const base = testConfig();
    gw = await startTestGateway(
      testConfig(
        {
          models: [...base.models, { ...base.models[0], id: 'mock/capped' }, { ...base.models[0], id: 'mock/per-key' }],
          plugins: [
            'auth',
            {
              limits: {
                key: { rpm: 50 },
                models: { 'mock/cap*': { rpm: 3 } },
                key_models: { 'mock/per-key': { rpm: 2 } },
                plans: { tiny: { key: { rpm: 1 } } },
              },
            },
            'routing',
          ],
        },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
  });
  after(() => gw.stop());

  const statuses = async (key: string, model: string, n: number) => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push((await chat(gw, key, { model })).status);
    return out;
  };

  it('a model limit is shared by all keys; a key x model limit is per key; a plan replaces the key default', async () => {
    const a = await makeAccountKey(gw);
    const b = await makeAccountKey(gw);
    expect([...(await statuses(a.key, 'mock/capped', 2)), ...(await statuses(b.key, 'mock/capped', 2))]).to.deep.equal([
      200, 200, 200, 429,
    ]);
    expect(await statuses(a.key, 'mock/per-key', 3)).to.deep.equal([200, 200, 429]);
    expect(await statuses(b.key, 'mock/per-key', 3)).to.deep.equal([200, 200, 429]);
    // The key default (50/min) applies elsewhere; its own setting wins over everything.
    const r = await chat(gw, a.key);
    expect(r.headers.get('x-ratelimit-limit-requests')).to.equal('50');
    const c = await makeAccountKey(gw);
    await adminCall(gw, 'PUT', `/v1/accounts/${c.accountId}/limits`, { rate_limits: { plan: 'tiny' } });
    expect(await statuses(c.key, 'mock/gpt-4o-mini', 2)).to.deep.equal([200, 429]);
    await adminCall(gw, 'PUT', `/v1/keys/${c.hash}/limits`, { rate_limits: { rpm: 0 } });
    const free = await chat(gw, c.key);
    expect(free.status).to.equal(200);
    expect(free.headers.get('x-ratelimit-limit-requests')).to.equal(null);
  });
});
