import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../../helpers/loopback';
import { startTestGateway, testConfig, postJson, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../../helpers/accounts';
import { SHOTS } from '../../helpers/screens';

/** The operator console in Debian's Chromium: every page, as the admin and as an account. */
describe('operator console (browser)', function () {
  this.timeout(120_000);
  let gw: TestGateway;
  let browser: Browser;
  const foreign: string[] = [];

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    gw = await startTestGateway(
      testConfig(
        {
          plugins: [
            'auth',
            { console: { rollup_interval_ms: 200, rollup_lag_ms: 0 } },
            'params',
            'fallback',
            'credit',
            'storage',
            'routing',
          ],
        },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await gw?.stop();
  });

  async function newPage(): Promise<{ context: BrowserContext; page: Page }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    // The console must load nothing from anywhere but the gateway.
    page.on('request', (r) => {
      if (!r.url().startsWith(gw.url) && !r.url().startsWith('data:')) foreign.push(r.url());
    });
    return { context, page };
  }

  async function signIn(page: Page, key: string): Promise<void> {
    await page.goto(`${gw.url}/console`);
    await page.fill('#signin-key', key);
    await page.click('#signin-submit');
    await page.waitForSelector('#page-overview .tiles');
  }

  const shot = (page: Page, name: string) =>
    page.screenshot({ path: join(SHOTS, `console-${name}.png`), fullPage: true });
  const chat = (key: string) =>
    postJson(
      `${gw.url}/v1/chat/completions`,
      { model: 'mock/gpt-4o-mini', messages: [{ role: 'user', content: 'Hello console' }] },
      { authorization: `Bearer ${key}`, 'x-title': 'Console Test App', 'http-referer': 'https://app.example' },
    );

  it('admin: sign in, create an account and a key, see its request in activity and the overview, disable it and see the next request refused', async () => {
    const { context, page } = await newPage();
    await page.goto(`${gw.url}/console`);
    await page.waitForSelector('#signin-key');
    await shot(page, 'signin');
    await page.fill('#signin-key', 'sk-gw-not-a-real-key');
    await page.click('#signin-submit');
    await page.waitForSelector('.notice.error');
    await signIn(page, ADMIN_KEY);
    expect(await page.textContent('#who')).to.include('admin');

    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'gw_console');
    expect(session?.httpOnly).to.equal(true);
    expect(session?.sameSite).to.equal('Strict');

    await page.click('#nav-keys');
    await page.waitForSelector('#accounts-table');
    await page.fill('#new-account-name', 'team-a');
    await page.fill('#new-account-credits', '5');
    await page.click('#new-account-submit');
    await page.waitForSelector('#accounts-table >> text=team-a');
    await page.selectOption('#key-account', { label: 'team-a' });
    await page.fill('#new-key-name', 'ci');
    await page.fill('#new-key-limit', '2');
    await page.click('#new-key-submit');
    const key = (await page.textContent('#new-key-value'))?.trim() ?? '';
    expect(key).to.match(/^sk-gw-[0-9A-Za-z]{36}$/);
    expect(await page.textContent('#new-key')).to.include('shown once');
    await shot(page, 'keys');

    const ok = await chat(key);
    expect(ok.status).to.equal(200);
    const completionId = ((await ok.json()) as { id: string }).id;

    await page.click('#nav-activity');
    await page.waitForSelector(`#records-table a[data-id="${completionId}"]`);
    await page.click(`#records-table a[data-id="${completionId}"]`);
    await page.waitForSelector('#record-answer');
    expect(await page.textContent('#record-title')).to.include(completionId);
    expect(await page.textContent('#record-answer')).to.include('Hello');
    await page.click('#record-raw-toggle');
    expect(await page.textContent('#record-json'))
      .to.include(completionId)
      .and.include('"output"');
    await shot(page, 'activity-record');
    await page.click('#record-close');
    expect(await page.textContent('#daily-table'))
      .to.include('mock/gpt-4o-mini')
      .and.include('https://app.example');
    await shot(page, 'activity');

    await page.click('#nav-overview');
    await page.waitForSelector('#tile-requests');
    expect((await page.textContent('#tile-requests strong'))?.trim()).to.equal('1');
    const total = await page.getAttribute('figure[data-chart^="Requests per"]', 'data-total');
    expect(Number(total)).to.equal(1);
    const tokens = await page.getAttribute('figure[data-chart="Tokens"]', 'data-total');
    expect(Number(tokens)).to.be.greaterThan(0);
    await shot(page, 'overview');

    await page.click('#nav-models');
    await page.waitForSelector('#models-table >> text=mock/gpt-4o-mini');
    await shot(page, 'models');
    await page.click('#nav-rankings');
    await page.waitForSelector('#rankings-table >> text=https://app.example');
    await shot(page, 'rankings');

    await page.click('#nav-keys');
    const label = `sk-gw-...${key.slice(-4)}`;
    await page.click(`button[data-toggle-key="${label}"]`);
    await page.waitForSelector(`[data-key-status="${label}"] >> text=disabled`);
    const refused = await chat(key);
    expect(refused.status).to.equal(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).to.equal('api_key_disabled');
    await context.close();
  });

  it('an account key sees only its own account; writes need the CSRF header', async () => {
    const a = await makeAccountKey(gw, { name: 'acct-one', credits: 3 });
    const b = await makeAccountKey(gw, { name: 'acct-two', credits: 3 });
    const bAnswer = await chat(b.key);
    const bId = ((await bAnswer.json()) as { id: string }).id;
    expect((await chat(a.key)).status).to.equal(200);

    const { context, page } = await newPage();
    await signIn(page, a.key);
    expect(await page.textContent('#who')).to.include('acct-one');
    await page.click('#nav-keys');
    await page.waitForSelector('#keys-table');
    const keysText = (await page.textContent('main')) ?? '';
    expect(keysText).to.include('acct-one').and.not.include('acct-two').and.not.include('team-a');
    expect(await page.$('#new-key-submit')).to.equal(null);
    await shot(page, 'account-keys');
    await page.click('#nav-activity');
    await page.waitForSelector('#records-table');
    expect(await page.$(`a[data-id="${bId}"]`)).to.equal(null);
    await shot(page, 'account-activity');

    // The same session through the API: another account's data is invisible, even when asked for by id.
    const req = context.request;
    const records = (await (await req.get(`${gw.url}/console/api/records?account_id=${b.accountId}`)).json()) as {
      data: Array<{ account_id: string }>;
    };
    expect(records.data.length).to.be.greaterThan(0);
    expect(records.data.every((r) => r.account_id === a.accountId)).to.equal(true);
    expect((await req.get(`${gw.url}/console/api/records/${bId}`)).status()).to.equal(404);
    const activity = (await (
      await req.get(`${gw.url}/console/api/activity?account_id=${b.accountId}&group_by=account`)
    ).json()) as { data: Array<{ account_id: string }> };
    expect(activity.data.map((r) => r.account_id)).to.deep.equal([a.accountId]);
    // Writes: no CSRF header -> 403; an account may not create keys even with it (403 naming the operator role).
    const noCsrf = await req.post(`${gw.url}/console/api/keys`, { data: { account_id: a.accountId, name: 'x' } });
    expect(noCsrf.status()).to.equal(403);
    expect(((await noCsrf.json()) as { error: { code: string } }).error.code).to.equal('csrf_token_invalid');
    const me = (await (await req.get(`${gw.url}/console/api/me`)).json()) as { data: { csrf_token: string } };
    const withCsrf = await req.post(`${gw.url}/console/api/keys`, {
      data: { account_id: a.accountId, name: 'x' },
      headers: { 'x-csrf-token': me.data.csrf_token },
    });
    expect(withCsrf.status()).to.equal(403);
    const refused = (await withCsrf.json()) as { error: { code: string; message: string } };
    expect(refused.error.code).to.equal('role_required');
    expect(refused.error.message).to.include("'operator'").and.include("'account'");

    // Disabling the key ends its console session.
    await adminCall(gw, 'PATCH', `/v1/keys/${a.hash}`, { disabled: true });
    expect((await req.get(`${gw.url}/console/api/me`)).status()).to.equal(401);
    await context.close();
    expect(foreign, 'requests to anything but the gateway').to.deep.equal([]);
  });
});
