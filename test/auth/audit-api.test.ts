import { expect } from 'chai';
import { startTestGateway, testConfig, type TestGateway } from '../helpers/gateway';
import { ADMIN_KEY, makeAccountKey } from '../helpers/accounts';

/** GET /v1/audit (issue 43): the audit log for the admin, filtered, paged, exported as CSV and NDJSON. */
describe('the audit log API', function () {
  this.timeout(20000);
  let gw: TestGateway;
  const get = (path: string, key = ADMIN_KEY) =>
    fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${key}` } });

  before(async () => {
    gw = await startTestGateway(testConfig({ plugins: ['auth', 'routing'] }, { GATEWAY_ADMIN_KEY: ADMIN_KEY }));
    const audit = gw.services.store.audit;
    const t = Date.parse('2026-11-01T00:00:00Z');
    await audit.append(
      {
        actor: 'admin',
        role: 'admin',
        source: 'admin_api',
        action: 'account.create',
        target: 'acct_a',
        address: '=HYPERLINK("x")',
        after: { name: 'team' },
      },
      t,
    );
    await audit.append(
      {
        actor: 'ops',
        role: 'operator',
        source: 'console',
        address: '10.0.0.9',
        action: 'key.update',
        target: 'h1',
        before: { limit: 1 },
        after: { limit: 2 },
      },
      t + 1000,
    );
    await audit.append(
      { actor: 'cli', role: 'admin', source: 'cli', action: 'credits.add', target: 'acct_a', after: { amount: 5 } },
      t + 2000,
    );
  });
  after(() => gw.stop());

  it('lists newest first for the admin key, with filters and pages; an account key is refused', async () => {
    const all = (await (await get('/v1/audit')).json()) as { data: Array<Record<string, unknown>>; next: string };
    expect(all.data.map((r) => r.action)).to.deep.equal(['credits.add', 'key.update', 'account.create']);
    expect(all.data[1]).to.deep.include({
      actor: 'ops',
      role: 'operator',
      source: 'console',
      address: '10.0.0.9',
      target: 'h1',
      before: { limit: 1 },
      after: { limit: 2 },
      created_at: '2026-11-01T00:00:01.000Z',
    });
    const byTarget = (await (await get('/v1/audit?target=acct_a&source=cli')).json()) as { data: unknown[] };
    expect(byTarget.data).to.have.length(1);
    const page = (await (await get('/v1/audit?limit=2')).json()) as { data: unknown[]; next: string };
    const rest = (await (await get(`/v1/audit?limit=2&before=${page.next}`)).json()) as {
      data: Array<{ action: string }>;
    };
    expect(rest.data.map((r) => r.action)).to.deep.equal(['account.create']);
    const since = (await (await get('/v1/audit?since=2026-11-01T00:00:01Z')).json()) as { data: unknown[] };
    expect(since.data).to.have.length(2);
    expect((await fetch(`${gw.url}/v1/audit`)).status).to.equal(401);
    const { key } = await makeAccountKey(gw);
    expect((await get('/v1/audit', key)).status).to.equal(403);
  });

  it('exports CSV (formulas defused) and NDJSON; bad filters are a 400 naming the parameter', async () => {
    // The three records made above (the previous test's account and key, made through the API, are audited too).
    const seeded = 'since=2026-11-01T00:00:00Z&until=2026-11-01T00:01:00Z';
    const csv = await get(`/v1/audit?format=csv&${seeded}`);
    expect(csv.headers.get('content-type')).to.match(/text\/csv/);
    const lines = (await csv.text()).trim().split('\r\n');
    expect(lines[0]).to.equal('id,created_at,actor,role,source,address,action,target,before,after');
    expect(lines).to.have.length(4);
    expect(lines[3]).to.contain(`,"'=HYPERLINK(""x"")",`);
    const nd = (await (await get(`/v1/audit?format=ndjson&${seeded}`)).text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { action: string });
    expect(nd.map((r) => r.action)).to.deep.equal(['credits.add', 'key.update', 'account.create']);
    for (const [q, param] of [
      ['limit=0', 'limit'],
      ['source=nowhere', 'source'],
      ['since=yesterday', 'since'],
      ['format=xml', 'format'],
      ['actor=a&actor=b', 'actor'],
    ]) {
      const r = await get(`/v1/audit?${q}`);
      expect(r.status, q).to.equal(400);
      expect(((await r.json()) as { error: { param: string } }).error.param, q).to.equal(param);
    }
    expect((await get('/v1/audit?constructor=x&__proto__=y')).status).to.equal(200);
  });
});
