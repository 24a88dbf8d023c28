import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../../helpers/loopback';
import { startTestGateway, testConfig, postJson, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall } from '../../helpers/accounts';
import { SHOTS, WIDTHS } from '../../helpers/screens';

type Width = keyof typeof WIDTHS;
const ACCOUNTS = 265;

/**
 * Managing from the console (issue 49) in Debian's Chromium, at phone and desktop widths, photographed under
 * .tmp/screenshots: 265 accounts searched, sorted and paged on the server (every one reachable, newest first); a key's
 * and an account's allowlist, rate limits and budget alerts edited through the limits plugin's admin section (the
 * gateway enforces them, the lists show them, a mistake is a readable sentence); a viewer sees them read-only.
 */
describe('operator console (browser): manage accounts, keys, limits and alerts', function () {
  this.timeout(300_000);
  let gw: TestGateway;
  let browser: Browser;
  const names: string[] = [];

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    gw = await startTestGateway(
      testConfig(
        // The cache too: a section the key and account pages draw from its fields alone.
        { plugins: ['auth', 'console', 'limits', 'credit', { cache: { models: ['mock/*'] } }, 'routing'] },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
    browser = await launchChromium();
    // One at a time: created_at orders them (newest first is acct-264).
    for (let i = 0; i < ACCOUNTS; i++) {
      const name = `acct-${String(i).padStart(3, '0')}`;
      const r = await adminCall(gw, 'POST', '/v1/accounts', { name, credits: (i * 7) % 101 });
      expect(r.status).to.equal(201);
      names.push(name);
    }
  });
  after(async () => {
    await browser?.close();
    await gw?.stop();
  });

  async function open(width: Width, key = ADMIN_KEY): Promise<Page> {
    const context = await browser.newContext({ viewport: WIDTHS[width] });
    const page = await context.newPage();
    await page.goto(`${gw.url}/console`);
    await page.fill('#signin-key', key);
    await page.click('#signin-submit');
    await page.waitForSelector('main');
    await page.click('#nav-keys');
    await page.waitForSelector('#accounts-table');
    return page;
  }
  const shot = (page: Page, name: string) =>
    page.screenshot({ path: join(SHOTS, `limits-${name}.png`), fullPage: true });
  const overflows = (page: Page) =>
    page.evaluate('document.documentElement.scrollWidth > window.innerWidth + 1') as Promise<boolean>;
  const firstColumn = (page: Page, table: string) =>
    page.$$eval(`${table} tbody tr td:first-child`, (els) => els.map((e) => e.textContent ?? ''));
  /** Wait until the table's first cell is no longer `before` (a page drawn again). */
  async function changed(page: Page, table: string, before: string | undefined): Promise<void> {
    for (let t = 0; t < 200 && (await firstColumn(page, table))[0] === before; t++)
      await new Promise((r) => setTimeout(r, 25));
  }

  it(`${ACCOUNTS} accounts: newest first, every one reachable page by page, searched and sorted on the server`, async () => {
    for (const width of ['phone', 'desktop'] as const) {
      const page = await open(width);
      expect((await firstColumn(page, '#accounts-table'))[0]).to.equal('acct-264');
      expect(await page.textContent('#accounts-total')).to.equal(`${ACCOUNTS} accounts`);
      expect(await overflows(page), `${width}: nothing runs off the screen`).to.equal(false);
      await shot(page, `accounts-${width}`);
      await page.context().close();
    }
    const page = await open('desktop');
    const seen: string[] = [];
    for (let i = 0; i < 20; i++) {
      const rows = await firstColumn(page, '#accounts-table');
      seen.push(...rows);
      if (!(await page.$('#accounts-older'))) break;
      await page.click('#accounts-older');
      await changed(page, '#accounts-table', rows[0]);
    }
    expect(seen, 'each account once, newest first').to.deep.equal([...names].reverse());

    await page.fill('#accounts-search', 'acct-07');
    await page.press('#accounts-search', 'Enter');
    await page.waitForSelector('#accounts-total >> text=10 accounts');
    expect(await firstColumn(page, '#accounts-table')).to.deep.equal(
      names.filter((n) => n.startsWith('acct-07')).reverse(),
    );
    await page.fill('#accounts-search', '');
    await page.press('#accounts-search', 'Enter');
    await page.waitForSelector(`#accounts-total >> text=${ACCOUNTS} accounts`);

    let top = (await firstColumn(page, '#accounts-table'))[0];
    await page.selectOption('#accounts-sort', 'name:asc');
    await changed(page, '#accounts-table', top);
    expect((await firstColumn(page, '#accounts-table'))[0]).to.equal('acct-000');
    top = 'acct-000';
    await page.selectOption('#accounts-sort', 'balance:desc');
    await changed(page, '#accounts-table', top);
    const balances = await page.$$eval('#accounts-table tbody tr td:nth-child(5)', (els) =>
      els.map((e) => Number((e.textContent ?? '').replace(/,/g, ''))),
    );
    expect(balances[0]).to.equal(100);
    expect(balances).to.deep.equal([...balances].sort((x, y) => y - x));
    await shot(page, 'accounts-by-balance-desktop');
    await page.context().close();
  });

  it("a key's allowlist, rate limit and alert thresholds set in the console: enforced, listed, audited; mistakes in words", async () => {
    const a = await adminCall(gw, 'POST', '/v1/accounts', { name: 'limited-team', credits: 10 });
    const accountId = (a.body.data as { id: string }).id;
    const k = await adminCall(gw, 'POST', '/v1/keys', { name: 'limited-key', account_id: accountId });
    const key = k.body.key as string;
    const hash = (k.body.data as { hash: string }).hash;
    const label = (k.body.data as { label: string }).label;

    for (const width of ['phone', 'desktop'] as const) {
      const page = await open(width);
      await page.fill('#keys-search', 'limited-key');
      await page.press('#keys-search', 'Enter');
      await page.waitForSelector(`[data-key-summary="${label}"]`);
      await page.click(`[data-key-settings="${label}"]`);
      await page.waitForSelector('#detail form[data-section="limits"]');
      const field = (path: string) => `#detail label[data-path="${path}"] input`;
      if (width === 'phone') {
        // A mistake the form catches, then one the server refuses: each a sentence naming the field.
        await page.fill(field('rate_limits.models'), '{not json');
        await page.click('[data-save="limits"]');
        await page.waitForSelector('#detail .notice.error');
        expect(await page.textContent('#detail .notice.error')).to.include('Per-model limits: not valid JSON');
        await page.fill(field('rate_limits.models'), '');
        await page.fill(field('rate_limits.rpm'), '2000000000');
        await page.click('[data-save="limits"]');
        await page.waitForSelector('#detail .notice.error >> text=Requests per minute');
        expect(await page.textContent('#detail .notice.error')).to.match(/^Requests per minute: must be <= 1000000000/);
        expect(await overflows(page), 'phone: nothing runs off the screen').to.equal(false);
        await shot(page, 'key-settings-error-phone');
        expect((await adminCall(gw, 'GET', `/v1/keys/${hash}/limits`)).body.data, 'nothing written').to.deep.equal({
          allowed_models: null,
          rate_limits: null,
          budget_alerts: null,
        });
      }
      // An allowlist and alert thresholds: "only these", then the list (not set and none are choices of their own).
      await page.selectOption(`#detail select[data-mode="allowed_models"]`, 'list');
      await page.fill(field('allowed_models'), 'mock/*');
      await page.fill(field('rate_limits.rpm'), '3');
      await page.selectOption(`#detail select[data-mode="budget_alerts.key_limit_percent"]`, 'list');
      await page.fill(field('budget_alerts.key_limit_percent'), '50, 90');
      await page.click('[data-save="limits"]');
      await page.waitForSelector('#detail .notice.ok >> text=saved');
      await page.waitForSelector(`[data-key-summary="${label}"] >> text=3 rpm`);
      expect(await page.textContent(`[data-key-summary="${label}"]`)).to.equal(
        'models: mock/* · 3 rpm · alerts 50% 90%',
      );
      await shot(page, `key-settings-${width}`);
      await page.context().close();
    }
    expect((await adminCall(gw, 'GET', `/v1/keys/${hash}/limits`)).body.data).to.deep.equal({
      allowed_models: ['mock/*'],
      rate_limits: { rpm: 3 },
      budget_alerts: { key_limit_percent: [50, 90] },
    });
    const log = await adminCall(gw, 'GET', `/v1/audit?action=limits.set&target=key:${hash}`);
    expect((log.body.data as Array<{ source: string }>).map((r) => r.source)).to.deep.equal(['console', 'console']);
    // The gateway holds the key to what the console set: three requests a minute, then 429.
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++)
      statuses.push(
        (
          await postJson(
            `${gw.url}/v1/chat/completions`,
            { model: 'mock/gpt-4o-mini', messages: [{ role: 'user', content: `hi ${i}` }] },
            { authorization: `Bearer ${key}` },
          )
        ).status,
      );
    expect(statuses).to.deep.equal([200, 200, 200, 429]);
  });

  it("an account's plan and balance thresholds; a viewer sees every value and no Save", async () => {
    const a = await adminCall(gw, 'POST', '/v1/accounts', { name: 'alerted-team', credits: 10 });
    const accountId = (a.body.data as { id: string }).id;
    const page = await open('desktop');
    await page.fill('#accounts-search', 'alerted-team');
    await page.press('#accounts-search', 'Enter');
    await page.waitForSelector('#accounts-total >> text="1 account"');
    await page.click('[data-account-settings="alerted-team"]');
    await page.waitForSelector('#detail form[data-section="limits"]');
    await page.selectOption('#detail select[data-mode="budget_alerts.account_balance_below"]', 'list');
    await page.fill('#detail label[data-path="budget_alerts.account_balance_below"] input', '5, 1');
    await page.fill('#detail label[data-path="rate_limits.tpm"] input', '100000');
    await page.click('[data-save="limits"]');
    await page.waitForSelector('[data-account-summary="alerted-team"] >> text=alerts');
    expect(await page.textContent('[data-account-summary="alerted-team"]')).to.equal('100000 tpm · alerts < 5, 1');
    // The cache's section, which the console knows only by its fields: a choice sent as the boolean it is.
    await page.selectOption('#detail form[data-section="cache"] select', 'false');
    await page.click('[data-save="cache"]');
    await page.waitForSelector('[data-account-summary="alerted-team"] >> text=cache off');
    expect((await adminCall(gw, 'GET', `/v1/accounts/${accountId}/cache`)).body.data).to.deep.equal({ enabled: false });
    await shot(page, 'account-settings-desktop');
    await page.context().close();
    expect((await adminCall(gw, 'GET', `/v1/accounts/${accountId}/limits`)).body.data).to.deep.equal({
      allowed_models: null,
      rate_limits: { tpm: 100000 },
      budget_alerts: { account_balance_below: [5, 1] },
    });

    const v = await adminCall(gw, 'POST', '/v1/keys', { name: 'viewer', account_id: accountId, role: 'viewer' });
    const viewer = await open('phone', v.body.key as string);
    await viewer.fill('#accounts-search', 'alerted-team');
    await viewer.press('#accounts-search', 'Enter');
    await viewer.waitForSelector('#accounts-total >> text="1 account"');
    await viewer.click('[data-account-settings="alerted-team"]');
    await viewer.waitForSelector('#detail form[data-section="limits"]');
    expect(await viewer.inputValue('#detail label[data-path="budget_alerts.account_balance_below"] input')).to.equal(
      '5, 1',
    );
    expect(await viewer.$('[data-save="limits"]')).to.equal(null);
    expect(await viewer.$('#new-account-submit')).to.equal(null);
    await shot(viewer, 'account-settings-viewer-phone');
    await viewer.context().close();
  });
});
