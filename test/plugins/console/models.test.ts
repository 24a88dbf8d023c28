import { expect } from 'chai';
import { MOCK_MODEL, startTestGateway, testConfig, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../../helpers/accounts';

/**
 * Issue 43: the console's Models page shows an account only the models its allowlists permit, and never the upstream
 * deployments behind them (names, health, in-flight counts): those are for the operator and admin roles.
 */
const IDS = ['acc/ok', 'acc/other', 'acc/denied', 'vendor/x', 'vendor/y'];
const MODELS = IDS.map((id) => ({
  ...MOCK_MODEL,
  id,
  deployments: [{ provider: 'mock', model: `upstream-${id.replace('/', '-')}` }],
}));

type Models = { data: Array<{ id: string; deployments: Array<Record<string, unknown>>; today: { requests: number } }> };

async function modelsAs(gw: { url: string }, key: string): Promise<Models & { raw: string }> {
  const res = await fetch(`${gw.url}/console/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key }),
  });
  expect(res.status).to.equal(200);
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0];
  const page = await fetch(`${gw.url}/console/api/models`, { headers: { cookie } });
  expect(page.status).to.equal(200);
  const raw = await page.text();
  return { ...(JSON.parse(raw) as Models), raw };
}

describe('console Models page: an account sees only what it may use (issue 43)', function () {
  this.timeout(30_000);
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway(
      testConfig(
        { models: MODELS, plugins: ['auth', 'fallback', 'limits', 'console', 'credit', 'routing'] },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
  });
  after(() => gw?.stop());

  it('an account limited to acc/ok lists acc/ok alone, without deployment names or in-flight counts', async () => {
    const { key, accountId } = await makeAccountKey(gw, { credits: 5 });
    expect(
      (await adminCall(gw, 'PUT', `/v1/accounts/${accountId}/limits`, { allowed_models: ['acc/ok'] })).status,
    ).to.equal(200);
    const seen = await modelsAs(gw, key);
    expect(seen.data.map((m) => m.id)).to.deep.equal(['acc/ok']);
    expect(seen.data[0].deployments).to.deep.equal([]);
    expect(seen.data[0].today).to.include({ requests: 0 });
    expect(seen.raw).to.not.contain('upstream-');
    expect(seen.raw).to.not.contain('in_flight');
  });

  it("a key's own allowlist narrows its account's", async () => {
    const { key, accountId, hash } = await makeAccountKey(gw, { credits: 5 });
    await adminCall(gw, 'PUT', `/v1/accounts/${accountId}/limits`, { allowed_models: ['acc/*'] });
    expect((await modelsAs(gw, key)).data.map((m) => m.id)).to.deep.equal(['acc/ok', 'acc/other', 'acc/denied']);
    await adminCall(gw, 'PUT', `/v1/keys/${hash}/limits`, { allowed_models: ['acc/other', 'vendor/x'] });
    expect((await modelsAs(gw, key)).data.map((m) => m.id)).to.deep.equal(['acc/other']);
  });

  it('the admin sees every model with its deployments, health and in-flight counts', async () => {
    const seen = await modelsAs(gw, ADMIN_KEY);
    expect(seen.data.map((m) => m.id)).to.deep.equal(IDS);
    expect(seen.data[0].deployments[0]).to.include({ deployment: 'mock/upstream-acc-ok', in_flight: 0 });
  });
});
