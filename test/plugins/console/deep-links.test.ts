import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../../helpers/loopback';
import { startTestGateway, testConfig, postJson, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../../helpers/accounts';
import { SHOTS, WIDTHS } from '../../helpers/screens';

type Width = keyof typeof WIDTHS;

/**
 * Issue 49's rough edges in Debian's Chromium, photographed under .tmp/screenshots at phone and desktop widths: the
 * accounts and keys tables as one labelled card per row on a phone, and a key's or an account's settings at their own
 * address, linked from the keys list, the activity table and a record, with Back and Forward.
 */
describe('operator console (browser): phone tables and settings deep links', function () {
  this.timeout(180_000);
  let gw: TestGateway;
  let browser: Browser;
  let hash = '';
  let accountId = '';

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    gw = await startTestGateway(
      testConfig({ plugins: ['auth', 'console', 'limits', 'credit', 'routing'] }, { GATEWAY_ADMIN_KEY: ADMIN_KEY }),
    );
    browser = await launchChromium();
    for (let i = 0; i < 3; i++) {
      const a = await adminCall(gw, 'POST', '/v1/accounts', { name: `research-team-${i}`, credits: 1234.5 * (i + 1) });
      accountId = (a.body.data as { id: string }).id;
      const k = await adminCall(gw, 'POST', '/v1/keys', { name: `notebook-${i}`, account_id: accountId });
      hash = (k.body.data as { hash: string }).hash;
      const chat = await postJson(
        `${gw.url}/v1/chat/completions`,
        { model: 'mock/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
        { authorization: `Bearer ${k.body.key as string}` },
      );
      expect(chat.status).to.equal(200);
    }
  });
  after(async () => {
    await browser?.close();
    await gw?.stop();
  });

  async function open(width: Width, path = '/console#/keys', key = ADMIN_KEY): Promise<Page> {
    const context = await browser.newContext({ viewport: WIDTHS[width] });
    const page = await context.newPage();
    await page.goto(`${gw.url}${path}`);
    await page.fill('#signin-key', key);
    await page.click('#signin-submit');
    await page.waitForSelector('main');
    return page;
  }
  const shot = (page: Page, name: string) =>
    page.screenshot({ path: join(SHOTS, `edges-${name}.png`), fullPage: true });
  const overflows = (page: Page) =>
    page.evaluate('document.documentElement.scrollWidth > window.innerWidth + 1') as Promise<boolean>;
  /** Every cell of some rows: its label as shown and whether it lies inside the window. */
  const cells = (page: Page, rows: string) =>
    page.evaluate(
      `[...document.querySelectorAll(${JSON.stringify(`${rows} td`)})].map((td) => {
        const r = td.getBoundingClientRect();
        return {
          label: getComputedStyle(td, '::before').content.replace(/"/g, ''),
          inside: r.left >= 0 && r.right <= window.innerWidth,
          text: td.textContent ?? '',
        };
      })`,
    ) as Promise<Array<{ label: string; inside: boolean; text: string }>>;

  it('at 390 px the accounts and keys tables are one labelled card per row, every value on screen; a top-up works', async () => {
    const page = await open('phone');
    await page.waitForSelector('#accounts-table');
    for (const table of ['#accounts-table', '#keys-table']) {
      const all = await cells(page, `${table} tbody`);
      expect(all.length, table).to.be.greaterThan(0);
      expect(
        all.filter((c) => !c.inside),
        `${table}: cells off the screen`,
      ).to.deep.equal([]);
      expect(await page.isVisible(`${table} thead`), `${table}: the heading row gives way to labels`).to.equal(false);
    }
    const first = await cells(page, '#accounts-table tbody tr:first-child');
    expect(first.map((c) => c.label)).to.deep.equal([
      'Name',
      'Id',
      'Credits',
      'Used',
      'Balance',
      'Created',
      'Settings',
      'Top up',
    ]);
    expect(first.find((c) => c.label === 'Credits')?.text).to.equal('3,703.50');
    expect(await overflows(page), 'nothing runs off the screen').to.equal(false);
    await page.fill('#accounts-table tbody tr:first-child input[type=number]', '10');
    await page.click('#accounts-table tbody tr:first-child button:has-text("Top up")');
    await page.waitForSelector('#keys-status .notice.ok');
    expect((await cells(page, '#accounts-table tbody tr:first-child'))[2].text).to.equal('3,713.50');
    await shot(page, 'accounts-phone');
    await page.context().close();

    const wide = await open('desktop');
    await wide.waitForSelector('#accounts-table');
    expect(await wide.isVisible('#accounts-table thead'), 'desktop: a table with its heading row').to.equal(true);
    expect(await overflows(wide)).to.equal(false);
    await shot(wide, 'accounts-desktop');
    await wide.context().close();
  });

  it("a key's settings have an address: from the list, Back and Forward, a shared link, activity and a record", async () => {
    for (const width of ['phone', 'desktop'] as const) {
      const page = await open(width);
      await page.waitForSelector('#keys-table');
      await page.fill('#keys-search', 'notebook');
      await page.press('#keys-search', 'Enter');
      await page.waitForSelector('#keys-table tbody tr:nth-child(3)');
      await page.click('#keys-table tr:has-text("notebook-2") [data-key-settings]');
      await page.waitForSelector('#detail form[data-section="limits"]');
      expect(new URL(page.url()).hash).to.equal(`#/keys?key=${hash}`);
      expect(await page.textContent('#detail-title')).to.match(/^Key notebook-2 \(sk-gw-/);
      await shot(page, `key-link-${width}`);
      // Back closes the settings and the list is as it was (still searched); Forward opens them again.
      await page.goBack();
      await page.waitForSelector('#detail', { state: 'hidden' });
      expect(await page.inputValue('#keys-search')).to.equal('notebook');
      await page.goForward();
      await page.waitForSelector('#detail form[data-section="limits"]');
      // Close (opened from the list): Back to the list.
      await page.click('#detail-close');
      await page.waitForSelector('#detail', { state: 'hidden' });
      expect(new URL(page.url()).hash).to.equal('#/keys');
      await page.context().close();
    }

    // A shared link, before signing in: the console opens on those settings.
    const linked = await open('phone', `/console#/keys?account=${accountId}`);
    await linked.waitForSelector('#detail form[data-section="limits"]');
    expect(await linked.textContent('#detail-title')).to.equal('Account research-team-2');
    expect(await overflows(linked)).to.equal(false);
    await shot(linked, 'account-link-phone');
    // Close (opened by its address): the list's own address, not a Back out of the console.
    await linked.click('#detail-close');
    await linked.waitForSelector('#detail', { state: 'hidden' });
    expect(new URL(linked.url()).hash).to.equal('#/keys');
    await linked.goto(`${gw.url}/console#/keys?key=${'0'.repeat(64)}`);
    await linked.waitForSelector('#keys-status .notice.error');
    expect(await linked.textContent('#keys-status')).to.equal(
      'No key with that hash among the keys this session sees.',
    );
    await linked.context().close();

    for (const width of ['phone', 'desktop'] as const) {
      const page = await open(width, '/console#/activity');
      await page.waitForSelector(`#records-table a[data-key-link="${hash}"]`);
      await page.click(`#records-table a[data-key-link="${hash}"]`);
      await page.waitForSelector('#detail form[data-section="limits"]');
      expect(await page.textContent('#detail-title')).to.match(/^Key notebook-2/);
      await page.goBack();
      await page.waitForSelector(`#records-table a[data-key-link="${hash}"]`);
      // From a record: the key's link leaves the record (its dialog closes) for the key's settings.
      await page.click(`#records-table tbody tr:has(a[data-key-link="${hash}"]) a.record-link`);
      await page.waitForSelector(`#record-summary a[data-key-link="${hash}"]`);
      await shot(page, `record-key-link-${width}`);
      await page.click(`#record-summary a[data-key-link="${hash}"]`);
      await page.waitForSelector('#detail form[data-section="limits"]');
      expect(await page.isVisible('dialog.record')).to.equal(false);
      expect(await overflows(page)).to.equal(false);
      await shot(page, `activity-to-key-${width}`);
      await page.context().close();
    }
  });
  it("an account's own session: its key's settings by address, read-only; another account's key or account is not there", async () => {
    const own = await makeAccountKey(gw, { name: 'own-team', credits: 1 });
    const page = await open('phone', `/console#/keys?key=${own.hash}`, own.key);
    await page.waitForSelector('#detail form[data-section="limits"]');
    expect(await page.textContent('#detail-title')).to.match(/^Key /);
    expect(await page.$('[data-save="limits"]'), 'no Save for an account session').to.equal(null);
    await page.goto(`${gw.url}/console#/keys?key=${hash}`);
    await page.waitForSelector('#keys-status .notice.error');
    expect(await page.textContent('#keys-status')).to.equal('No key with that hash among the keys this session sees.');
    expect(await page.isVisible('#detail')).to.equal(false);
    await page.goto(`${gw.url}/console#/keys?account=${accountId}`);
    await page.waitForSelector('#keys-status >> text=No account with that id');
    await shot(page, 'foreign-account-phone');
    await page.context().close();
  });
});
