import { expect } from 'chai';
import { startTestGateway, testConfig, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../../helpers/accounts';

/** The limits settings routes and roles (issue 43): a viewer reads, an operator sets, each change audited. */
describe('limits settings routes by role', function () {
  this.timeout(20000);
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway(
      testConfig({ plugins: ['auth', 'limits', 'routing'] }, { GATEWAY_ADMIN_KEY: ADMIN_KEY }),
    );
  });
  after(() => gw.stop());

  const staffKey = async (role: 'viewer' | 'operator') => {
    const { accountId } = await makeAccountKey(gw);
    const r = await adminCall(gw, 'POST', '/v1/keys', { name: role, account_id: accountId, role });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    return r.body.key as string;
  };

  it('a viewer reads but cannot set (403 naming operator); an operator sets, and the change is audited', async () => {
    const target = await makeAccountKey(gw);
    const viewer = await staffKey('viewer');
    const operator = await staffKey('operator');
    const path = `/v1/keys/${target.hash}/limits`;
    expect((await adminCall(gw, 'GET', path, undefined, viewer)).status).to.equal(200);
    const denied = await adminCall(gw, 'PUT', path, { rate_limits: { rpm: 5 } }, viewer);
    expect(denied.status).to.equal(403);
    expect((denied.body.error as { code: string; message: string }).code).to.equal('role_required');
    expect((denied.body.error as { message: string }).message).to.match(/'operator'/);
    const set = await adminCall(gw, 'PUT', path, { rate_limits: { rpm: 5 } }, operator);
    expect(set.status).to.equal(200);
    const { key: account } = await makeAccountKey(gw);
    expect((await adminCall(gw, 'GET', path, undefined, account)).status).to.equal(403);
    const log = await gw.services.store.audit.list({ action: 'limits.set', limit: 5 });
    expect(log).to.have.length(1);
    expect(log[0]).to.deep.include({ role: 'operator', target: `key:${target.hash}` });
    expect(log[0].before).to.deep.equal({ allowed_models: null, rate_limits: null, budget_alerts: null });
    expect(log[0].after).to.deep.equal({ allowed_models: null, rate_limits: { rpm: 5 }, budget_alerts: null });
  });
});
