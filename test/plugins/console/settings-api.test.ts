import { expect } from 'chai';
import { startTestGateway, testConfig, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../../helpers/accounts';

type Rec = Record<string, unknown>;

/** A console session opened over HTTP: its cookie and CSRF token. */
async function signIn(gw: { url: string }, key: string): Promise<{ cookie: string; csrf: string }> {
  const res = await fetch(`${gw.url}/console/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key }),
  });
  expect(res.status).to.equal(200);
  const csrf = ((await res.json()) as { data: { csrf_token: string } }).data.csrf_token;
  return { cookie: (res.headers.get('set-cookie') ?? '').split(';')[0], csrf };
}

/**
 * Other plugins' settings through the console (decision 0048): the limits plugin's section listed, read and written
 * under /console/api/settings with the session's role, CSRF and audit; the same values as the admin API's.
 */
describe('console settings sections (admin.sections)', function () {
  this.timeout(60_000);
  let gw: TestGateway;
  let admin: { cookie: string; csrf: string };
  const call = async (
    s: { cookie: string; csrf: string },
    method: string,
    path: string,
    body?: unknown,
    csrf = true,
  ) => {
    const res = await fetch(`${gw.url}${path}`, {
      method,
      headers: {
        cookie: s.cookie,
        ...(csrf ? { 'x-csrf-token': s.csrf } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Rec };
  };

  before(async () => {
    gw = await startTestGateway(
      testConfig({ plugins: ['auth', 'console', 'limits', 'routing'] }, { GATEWAY_ADMIN_KEY: ADMIN_KEY }),
    );
    admin = await signIn(gw, ADMIN_KEY);
  });
  after(() => gw?.stop());

  it('lists the limits section with its form, for any session', async () => {
    const res = await call(admin, 'GET', '/console/api/settings');
    expect(res.status).to.equal(200);
    const limits = (res.body.data as Rec[]).find((s) => s.name === 'limits');
    expect(limits?.subjects).to.deep.equal(['key', 'account']);
    expect((limits?.fields as Rec[]).map((f) => f.path)).to.include.members([
      'allowed_models',
      'rate_limits.rpm',
      'budget_alerts.key_limit_percent',
    ]);
    expect(limits?.roles).to.deep.equal({ read: 'viewer', write: 'operator' });
  });

  it("an operator sets a key's limits (audited, source console); the admin API reads the same values", async () => {
    const { hash: keyHash, accountId } = await makeAccountKey(gw, { name: 'settings-op' });
    const op = await adminCall(gw, 'POST', '/v1/keys', {
      name: 'op',
      account_id: (await makeAccountKey(gw)).accountId,
      role: 'operator',
    });
    const operator = await signIn(gw, op.body.key as string);
    const value = {
      allowed_models: ['mock/*'],
      rate_limits: { rpm: 7, models: { 'mock/*': { tpm: 900 } } },
      budget_alerts: { key_limit_percent: [50, 90] },
    };
    const put = await call(operator, 'PUT', `/console/api/settings/limits/key/${keyHash}`, value);
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect(put.body.data).to.deep.equal(value);
    const api = await adminCall(gw, 'GET', `/v1/keys/${keyHash}/limits`);
    expect(api.body.data).to.deep.equal(value);
    const got = await call(admin, 'GET', `/console/api/settings/limits/key/${keyHash}`);
    expect(got.body.data).to.deep.equal(value);
    const log = await adminCall(gw, 'GET', `/v1/audit?action=limits.set&target=key:${keyHash}`);
    const rows = log.body.data as Rec[];
    expect(rows).to.have.length(1);
    expect(rows[0]).to.include({ source: 'console', role: 'operator' });
    expect((rows[0].after as Rec).rate_limits).to.deep.equal(value.rate_limits);
    // The keys list shows the summary in its column.
    const list = await call(admin, 'GET', `/console/api/keys?account_id=${accountId}`);
    const row = (list.body.data as Rec[]).find((k) => k.hash === keyHash);
    expect((row?.settings as Rec).limits).to.equal('models: mock/* · 7 rpm · 1 model limits · alerts 50% 90%');
  });

  it('refuses: a viewer writing (403), no CSRF (403), bad input (400 naming the field, nothing written), unknowns (404)', async () => {
    const { hash: keyHash, accountId, key } = await makeAccountKey(gw, { name: 'settings-refused' });
    const v = await adminCall(gw, 'POST', '/v1/keys', { name: 'viewer', account_id: accountId, role: 'viewer' });
    const viewer = await signIn(gw, v.body.key as string);
    const path = `/console/api/settings/limits/key/${keyHash}`;
    const good = { rate_limits: { rpm: 5 } };

    const refused = await call(viewer, 'PUT', path, good);
    expect([refused.status, (refused.body.error as Rec).code]).to.deep.equal([403, 'role_required']);
    expect((await call(viewer, 'GET', path)).status, 'a viewer reads').to.equal(200);
    const noCsrf = await call(admin, 'PUT', path, good, false);
    expect(noCsrf.status).to.equal(403);

    // Half right, half wrong: nothing of it is written.
    const bad = await call(admin, 'PUT', path, { allowed_models: ['ok/*'], rate_limits: { rpm: -1 } });
    expect(bad.status).to.equal(400);
    expect(bad.body.error).to.include({
      type: 'invalid_request_error',
      code: 'invalid_field',
      param: 'rate_limits.rpm',
    });
    const keyAlerts = await call(admin, 'PUT', path, { budget_alerts: { account_balance_below: [1] } });
    expect([keyAlerts.status, (keyAlerts.body.error as Rec).param]).to.deep.equal([
      400,
      'budget_alerts.account_balance_below',
    ]);
    const unchanged = await call(admin, 'GET', path);
    expect(unchanged.body.data).to.deep.equal({ allowed_models: null, rate_limits: null, budget_alerts: null });
    const audited = await adminCall(gw, 'GET', `/v1/audit?action=limits.set&target=key:${keyHash}`);
    expect(audited.body.data).to.have.length(0);

    expect((await call(admin, 'GET', `/console/api/settings/limits/key/${'0'.repeat(64)}`)).status).to.equal(404);
    expect((await call(admin, 'GET', `/console/api/settings/nothing/key/${keyHash}`)).status).to.equal(404);
    expect((await call(admin, 'GET', `/console/api/settings/limits/gateway/-`)).status).to.equal(404);

    // An account's own session reads its own key's settings, never writes them, and sees no other account's.
    const own = await signIn(gw, key);
    expect((await call(own, 'GET', path)).status).to.equal(200);
    expect((await call(own, 'GET', `/console/api/settings/limits/account/${accountId}`)).status).to.equal(200);
    expect((await call(own, 'PUT', path, good)).status).to.equal(403);
    const other = await makeAccountKey(gw);
    expect((await call(own, 'GET', `/console/api/settings/limits/account/${other.accountId}`)).status).to.equal(403);
  });

  it("an account's settings: plan and balance thresholds, through the console and the admin API alike", async () => {
    const { accountId } = await makeAccountKey(gw, { name: 'settings-account' });
    const value = { rate_limits: { plan: 'pro' }, budget_alerts: { account_balance_below: [5, 1] } };
    const put = await call(admin, 'PUT', `/console/api/settings/limits/account/${accountId}`, value);
    expect(put.status, JSON.stringify(put.body)).to.equal(200);
    expect((await adminCall(gw, 'GET', `/v1/accounts/${accountId}/limits`)).body.data).to.deep.equal({
      allowed_models: null,
      ...value,
    });
    const viaApi = await adminCall(gw, 'PUT', `/v1/accounts/${accountId}/limits`, { budget_alerts: null });
    expect(viaApi.status).to.equal(200);
    expect((viaApi.body.data as Rec).budget_alerts).to.equal(null);
  });
});

/** A section the console has never heard of, from a plugin outside the tree: every kind of subject, items, an action. */
describe("console settings: any plugin's section (a fixture plugin)", function () {
  this.timeout(60_000);
  let gw: TestGateway;
  const call = async (s: { cookie: string; csrf: string }, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${gw.url}${path}`, {
      method,
      headers: {
        cookie: s.cookie,
        'x-csrf-token': s.csrf,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Rec };
  };

  before(async () => {
    gw = await startTestGateway(
      testConfig(
        { plugins: ['auth', 'console', { use: './test/fixtures/plugins/notes-section' }, 'routing'] },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
  });
  after(() => gw?.stop());

  it('the gateway value, items (list, put, delete) and an action, each audited; roles as the section says', async () => {
    const admin = await signIn(gw, ADMIN_KEY);
    expect((await call(admin, 'PUT', '/console/api/settings/notes/gateway/-', { text: 'hello' })).status).to.equal(200);
    expect((await call(admin, 'GET', '/console/api/settings/notes/gateway/-')).body.data).to.deep.equal({
      text: 'hello',
    });
    expect((await call(admin, 'PUT', '/console/api/settings/notes/item/first', { text: 'one' })).status).to.equal(200);
    expect((await call(admin, 'GET', '/console/api/settings/notes/item')).body.data).to.deep.equal([
      { id: 'first', value: { text: 'one' } },
    ]);
    const bad = await call(admin, 'PUT', '/console/api/settings/notes/item/second', { text: 42 });
    expect([bad.status, (bad.body.error as Rec).param]).to.deep.equal([400, 'text']);
    expect((await call(admin, 'DELETE', '/console/api/settings/notes/item/first')).status).to.equal(200);
    expect((await call(admin, 'DELETE', '/console/api/settings/notes/item/first')).status).to.equal(404);
    expect((await call(admin, 'GET', '/console/api/settings/notes/item')).body.data).to.deep.equal([]);

    const { accountId, hash, key } = await makeAccountKey(gw, { name: 'notes-account' });
    expect((await call(admin, 'PUT', `/console/api/settings/notes/key/${hash}`, { text: 'k' })).status).to.equal(200);
    const own = await signIn(gw, key);
    // read: operator, so an account's own session neither reads its key's note nor sees it in the list.
    expect((await call(own, 'GET', `/console/api/settings/notes/key/${hash}`)).status).to.equal(403);
    const mine = await call(own, 'GET', '/console/api/keys');
    expect((mine.body.data as Rec[]).find((k) => k.hash === hash)?.settings).to.deep.equal({});
    const listed = await call(admin, 'GET', `/console/api/keys?account_id=${accountId}`);
    expect((listed.body.data as Rec[])[0].settings).to.deep.equal({ notes: 'note: k' });

    const op = await adminCall(gw, 'POST', '/v1/keys', { name: 'op', account_id: accountId, role: 'operator' });
    const operator = await signIn(gw, op.body.key as string);
    const refused = await call(operator, 'POST', '/console/api/settings/notes/actions/clear', {});
    expect([refused.status, (refused.body.error as Rec).code]).to.deep.equal([403, 'role_required']);
    const cleared = await call(admin, 'POST', '/console/api/settings/notes/actions/clear', {});
    expect(cleared.body.data).to.deep.equal({ cleared: 2 });
    expect((await call(admin, 'POST', '/console/api/settings/notes/actions/nothing', {})).status).to.equal(404);

    const log = await adminCall(gw, 'GET', '/v1/audit?source=console');
    const actions = (log.body.data as Rec[]).map((r) => `${String(r.action)} ${String(r.target)}`);
    expect(actions).to.include.members([
      'notes.set gateway:-',
      'notes.set item:first',
      'notes.delete item:first',
      `notes.set key:${hash}`,
      'notes.clear notes',
    ]);
    expect(
      actions.filter((a) => a.includes('item:second')),
      'a refused write is not audited',
    ).to.deep.equal([]);
  });
});
