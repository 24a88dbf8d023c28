import { expect } from 'chai';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../../helpers/loopback';
import { startTestGateway, testConfig, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../../helpers/accounts';

type Rec = Record<string, unknown>;

/** A console session opened over HTTP (its cookie). */
async function signIn(gw: { url: string }, key: string): Promise<string> {
  const res = await fetch(`${gw.url}/console/api/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key }),
  });
  expect(res.status).to.equal(200);
  return (res.headers.get('set-cookie') ?? '').split(';')[0];
}

async function get(gw: { url: string }, cookie: string, path: string) {
  const res = await fetch(`${gw.url}${path}`, { headers: { cookie } });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

/** The audit log in the console (issue 43): GET /console/api/audit for viewer and above, and the Audit log page. */
describe('console audit log', function () {
  this.timeout(120_000);
  let gw: TestGateway;

  before(async () => {
    gw = await startTestGateway(
      testConfig({ plugins: ['auth', 'console', 'routing'] }, { GATEWAY_ADMIN_KEY: ADMIN_KEY }),
    );
  });
  after(() => gw?.stop());

  it('a viewer lists, filters, pages and exports the log as GET /v1/audit does; an account gets 403 role_required', async () => {
    const acct = await makeAccountKey(gw, { name: 'audit-<b>acct</b>' });
    const v = await adminCall(gw, 'POST', '/v1/keys', { name: 'viewer', account_id: acct.accountId, role: 'viewer' });
    expect(v.status).to.equal(201);
    const viewer = await signIn(gw, v.body.key as string);

    const all = await get(gw, viewer, '/console/api/audit?action=account.create');
    expect(all.status).to.equal(200);
    const body = JSON.parse(all.text) as { data: Rec[]; next: string | null };
    const mine = body.data.find((r) => r.target === acct.accountId) as Rec;
    expect(mine).to.include({ action: 'account.create', source: 'admin_api', actor: 'admin' });
    expect(body.data.every((r) => r.action === 'account.create')).to.equal(true);
    // The same answer as the admin API's.
    const api = await adminCall(gw, 'GET', '/v1/audit?action=account.create');
    expect(api.body.data).to.deep.equal(body.data);

    // Paging: `before` = the last id of the previous page.
    const p1 = JSON.parse((await get(gw, viewer, '/console/api/audit?limit=1')).text) as { data: Rec[]; next: string };
    const p2 = JSON.parse((await get(gw, viewer, `/console/api/audit?limit=1&before=${p1.next}`)).text) as {
      data: Rec[];
    };
    expect(p1.data).to.have.length(1);
    expect(p2.data).to.have.length(1);
    expect(p2.data[0].id).to.not.equal(p1.data[0].id);

    const csv = await get(gw, viewer, '/console/api/audit?format=csv&action=key.create');
    expect(csv.status).to.equal(200);
    expect(csv.type).to.include('text/csv');
    expect(csv.text.split('\r\n')[0]).to.equal('id,created_at,actor,role,source,address,action,target,before,after');
    expect(csv.text).to.include('key.create').and.not.include('account.create');
    const nd = await get(gw, viewer, '/console/api/audit?format=ndjson&target=' + acct.accountId);
    expect(nd.type).to.include('application/x-ndjson');
    expect(
      nd.text
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as Rec).target),
    ).to.include(acct.accountId);

    const bad = await get(gw, viewer, '/console/api/audit?source=nowhere');
    expect(bad.status).to.equal(400);
    expect(await get(gw, '', '/console/api/audit').then((r) => r.status)).to.equal(401);

    const account = await signIn(gw, acct.key);
    const refused = await get(gw, account, '/console/api/audit');
    expect(refused.status).to.equal(403);
    expect((JSON.parse(refused.text) as { error: { code: string } }).error.code).to.equal('role_required');
    expect((await get(gw, account, '/console/api/audit?format=csv')).status).to.equal(403);
  });

  it('Chromium: the page lists a change made in the test, escaped, and filters it by action', async () => {
    const name = `<img src=x onerror="window.pwned=1">audit-${Date.now()}`;
    const made = await adminCall(gw, 'POST', '/v1/accounts', { name, credits: 1 });
    expect(made.status).to.equal(201);
    const id = (made.body.data as { id: string }).id;
    const browser: Browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(`${gw.url}/console`);
      await page.fill('#signin-key', ADMIN_KEY);
      await page.click('#signin-submit');
      await page.waitForSelector('#page-overview');
      await page.click('#nav-audit');
      await page.waitForSelector(`#audit-table >> text=${id}`);
      // The account's name is in the change (shortened in the cell, whole in its title), as text, never as markup.
      expect(await page.textContent('#audit-table')).to.include('"name":"<img src=x');
      const titles = await page.$$eval('#audit-table td span[title]', (els) => els.map((e) => e.getAttribute('title')));
      expect(titles.join('\n')).to.include(JSON.stringify(name).slice(1, -1));
      expect(await page.evaluate(() => (globalThis as { pwned?: number }).pwned)).to.equal(undefined);
      expect(await page.$('#audit-table img')).to.equal(null);

      await page.fill('#audit-action', 'key.create');
      await page.click('#audit-apply');
      // Polled from the test, not with waitForFunction: the console's CSP (script-src 'self') forbids its eval.
      for (let i = 0; (await page.textContent('#audit-table'))?.includes(id); i++) {
        if (i > 100) throw new Error('the action filter did not narrow the table');
        await new Promise((r) => setTimeout(r, 50));
      }
      await page.fill('#audit-action', 'account.create');
      await page.fill('#audit-target', id);
      await page.click('#audit-apply');
      await page.waitForSelector(`#audit-table >> text=${id}`);
      expect(await page.$$eval('#audit-table tbody tr', (rows) => rows.length)).to.equal(1);
      expect(await page.getAttribute('#audit-export-csv', 'href')).to.equal(
        `/console/api/audit?action=account.create&target=${id}&format=csv`,
      );

      await page.fill('#audit-action', 'no.such.action');
      await page.click('#audit-apply');
      await page.waitForSelector('#audit-empty');
      expect(await page.textContent('#audit-empty')).to.include('appears here');
    } finally {
      await browser.close();
    }
  });
});
