import { expect } from 'chai';
import { MOCK_MODEL, postJson, startTestGateway, testConfig, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, makeAccountKey } from '../../helpers/accounts';
import { samples } from '../metrics/scrape';

/**
 * The console's data API without a browser (api-session, api-keys, api-usage), and its absence from the chat chain:
 * it has no middleware, so a chat request never passes through it.
 */
describe('console API', function () {
  this.timeout(30_000);
  let gw: TestGateway;
  let cookie = '';
  let csrf = '';
  const call = async (method: string, path: string, body?: unknown, session = cookie) => {
    const res = await fetch(`${gw.url}${path}`, {
      method,
      headers: {
        cookie: session,
        'x-csrf-token': csrf,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
  };

  before(async () => {
    gw = await startTestGateway(
      testConfig(
        {
          plugins: ['metrics', 'auth', { console: { rollup_interval_ms: 100, rollup_lag_ms: 0 } }, 'credit', 'routing'],
        },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
    const res = await postJson(`${gw.url}/console/api/session`, { key: ADMIN_KEY });
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-security-policy')).to.include("default-src 'self'");
    cookie = (res.headers.get('set-cookie') ?? '').split(';')[0];
    csrf = ((await res.json()) as { data: { csrf_token: string } }).data.csrf_token;
  });
  after(() => gw?.stop());

  it('has no step on the chat chain: a chat request is timed in the plugins around it, never in console', async () => {
    const { key } = await makeAccountKey(gw, { credits: 5 });
    const res = await postJson(
      `${gw.url}/v1/chat/completions`,
      { model: MOCK_MODEL.id, messages: [{ role: 'user', content: 'hi' }] },
      { authorization: `Bearer ${key}` },
    );
    expect(res.status).to.equal(200);
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    const timed = samples(text, 'gateway_plugin_duration_seconds_count').map((s) => s.labels);
    expect(timed.some((l) => l.includes('plugin="routing"'))).to.equal(true);
    expect(timed.some((l) => l.includes('plugin="console"'))).to.equal(false);
  });

  it('accounts and keys: pages with cursors, a new key shown once (no-store), a patch, and the 4xx on the way', async () => {
    const acct = await call('POST', '/console/api/accounts', { name: 'console-api', credits: 3 });
    expect(acct.status).to.equal(201);
    const accountId = (acct.body.data as { id: string }).id;
    const keys: string[] = [];
    for (let i = 0; i < 3; i++) {
      const k = await call('POST', '/console/api/keys', { account_id: accountId, name: `k${i}` });
      expect(k.status).to.equal(201);
      expect(k.headers.get('cache-control')).to.equal('no-store');
      expect(k.body.key).to.match(/^sk-gw-/);
      keys.push((k.body.data as { hash: string }).hash);
    }
    const seen: string[] = [];
    let cursor: unknown = null;
    do {
      const q = `/console/api/keys?account_id=${accountId}&limit=2${cursor ? `&cursor=${String(cursor)}` : ''}`;
      const page = await call('GET', q);
      expect(page.status).to.equal(200);
      for (const k of page.body.data as Array<{ hash: string }>) seen.push(k.hash);
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen, 'newest first').to.deep.equal([...keys].reverse());
    const found = await call('GET', `/console/api/keys?q=k1&account_id=${accountId}`);
    expect((found.body.data as Array<{ hash: string }>).map((k) => k.hash)).to.deep.equal([keys[1]]);
    const deleted = await call('DELETE', `/console/api/keys/${keys[2]}`);
    expect(deleted.body.data).to.deep.equal({ hash: keys[2], deleted: true });
    expect((await call('DELETE', `/console/api/keys/${keys[2]}`)).status).to.equal(404);
    const accounts = await call('GET', '/console/api/accounts?limit=200');
    expect((accounts.body.data as Array<{ id: string }>).map((a) => a.id)).to.include(accountId);

    const patched = await call('PATCH', `/console/api/keys/${keys[0]}`, { disabled: true });
    expect((patched.body.data as { disabled: boolean }).disabled).to.equal(true);
    expect((await call('PATCH', '/console/api/keys/nothex', { disabled: true })).status).to.equal(404);
    const noAccount = await call('POST', '/console/api/keys', { account_id: 'acct_missing', name: 'x' });
    expect(noAccount.status).to.equal(404);
    expect(noAccount.headers.get('cache-control')).to.not.equal('no-store');
    expect((await call('GET', '/console/api/keys?cursor=bogus')).status).to.equal(400);
    const credits = await call('POST', `/console/api/accounts/${accountId}/credits`, { amount: 2 });
    expect((credits.body.data as { credits: number }).credits).to.equal(5);
    expect((await call('GET', '/console/api/keys', undefined, '')).status).to.equal(401);
  });

  it('overview, records, models and rankings answer their shapes; bad parameters are 400s', async () => {
    const overview = await call('GET', '/console/api/overview?window=15m');
    expect(overview.status).to.equal(200);
    expect(overview.body).to.include({ window: '15m', bucket_seconds: 60 });
    expect(overview.body.series).to.have.length(15);
    expect(overview.body.daily).to.have.length(30);
    expect((await call('GET', '/console/api/overview?window=2d')).status).to.equal(400);

    const records = await call('GET', '/console/api/records?limit=5');
    const rows = records.body.data as Array<{ id: string; model: string; streamed: boolean }>;
    expect(rows.length).to.be.greaterThan(0);
    expect(rows[0]).to.include({ model: MOCK_MODEL.id, streamed: false });
    const one = await call('GET', `/console/api/records/${rows[0].id}`);
    expect((one.body.data as { id: string; response: null }).response).to.equal(null);
    expect((await call('GET', '/console/api/records?status=lost')).status).to.equal(400);
    expect((await call('GET', '/console/api/records/gen_missing')).status).to.equal(404);

    const models = await call('GET', '/console/api/models');
    const mock = (models.body.data as Array<{ id: string; deployments: Array<{ state: string }> }>).find(
      (m) => m.id === MOCK_MODEL.id,
    );
    expect(mock?.deployments[0].state).to.equal('unknown');
    const ranked = await call('GET', '/console/api/rankings?days=1');
    expect(ranked.body.days).to.equal(1);
    expect((await call('GET', '/console/api/rankings?days=0')).status).to.equal(400);
  });
});
