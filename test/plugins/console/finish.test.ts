import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../../helpers/loopback';
import { startTestGateway, testConfig, postJson, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../../helpers/accounts';
import { SHOTS, WIDTHS } from '../../helpers/screens';

/**
 * The console's finish (issue 49) in Debian's Chromium, at phone and desktop widths, each step photographed under
 * .tmp/screenshots: an empty overview that says what to do, then every outcome counted in the tiles, money under the
 * configured unit with fixed decimals, a nav that fits the phone, a readable message when a proxy answers HTML, the
 * app's own not-found page, and GET / leading to the console.
 */
describe('operator console (browser): outcomes, formats, failures, phone and desktop', function () {
  this.timeout(180_000);
  let gw: TestGateway;
  let browser: Browser;

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    gw = await startTestGateway(
      testConfig(
        { plugins: ['auth', { console: { credit_unit: 'USD' } }, 'params', 'credit', 'routing'] },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await gw?.stop();
  });

  async function open(width: keyof typeof WIDTHS, path = '/console'): Promise<Page> {
    const context = await browser.newContext({ viewport: WIDTHS[width] });
    const page = await context.newPage();
    await page.goto(`${gw.url}${path}`);
    await page.fill('#signin-key', ADMIN_KEY);
    await page.click('#signin-submit');
    await page.waitForSelector('main');
    return page;
  }
  const shot = (page: Page, name: string) =>
    page.screenshot({ path: join(SHOTS, `finish-${name}.png`), fullPage: true });
  /** Whether the page is wider than the window (something runs off the screen). */
  const overflows = (page: Page) =>
    page.evaluate('document.documentElement.scrollWidth > window.innerWidth + 1') as Promise<boolean>;

  it('an empty overview says what to do next, at both widths; the phone nav fits the screen', async () => {
    for (const width of ['phone', 'desktop'] as const) {
      const page = await open(width);
      await page.waitForSelector('#overview-empty');
      expect(await page.textContent('#overview-empty')).to.include('Keys page');
      expect(await overflows(page), `${width}: nothing runs off the screen`).to.equal(false);
      await shot(page, `overview-empty-${width}`);
      await page.context().close();
    }
  });

  it('every outcome in the tiles, money in USD with fixed decimals; readable at both widths', async () => {
    const a = await makeAccountKey(gw, { credits: 5 });
    const ask = { model: 'mock/gpt-4o-mini', messages: [{ role: 'user', content: 'Hello console' }] };
    for (let i = 0; i < 3; i++)
      expect(
        (await postJson(`${gw.url}/v1/chat/completions`, ask, { authorization: `Bearer ${a.key}` })).status,
      ).to.equal(200);
    expect(
      (await postJson(`${gw.url}/v1/chat/completions`, ask, { authorization: 'Bearer sk-gw-wrong' })).status,
    ).to.equal(401);
    expect(
      (
        await postJson(
          `${gw.url}/v1/chat/completions`,
          { model: 'mock/gpt-4o-mini' },
          { authorization: `Bearer ${a.key}` },
        )
      ).status,
    ).to.equal(400);
    await new Promise((r) => setTimeout(r, 1200)); // the refusals' records are written every 500 ms
    for (const width of ['phone', 'desktop'] as const) {
      const page = await open(width);
      await page.waitForSelector('#tile-requests');
      expect(await page.textContent('#tile-requests strong')).to.equal('5');
      expect(await page.textContent('#tile-client-errors strong')).to.equal('2');
      expect(await page.textContent('#tile-error-rate strong')).to.equal('40.0%');
      expect(await page.textContent('#tile-spend small')).to.include('USD');
      const spend = (await page.textContent('#tile-spend strong')) ?? '';
      expect(spend)
        .to.match(/^\d[\d,]*\.\d+$/)
        .and.not.include('e-');
      const ticks = await page.$$eval('.chart .tick', (els) => els.map((e) => e.textContent ?? ''));
      expect(
        ticks.filter((t) => /e[-+]|\.\d{7,}/.test(t)),
        'no exponent, at most six decimals',
      ).to.deep.equal([]);
      expect(await overflows(page), `${width}: nothing runs off the screen`).to.equal(false);
      await shot(page, `overview-${width}`);
      await page.context().close();
    }
  });

  it('the Activity filter finds each outcome: the two refusals as client errors', async () => {
    for (const width of ['phone', 'desktop'] as const) {
      const page = await open(width, '/console#/activity');
      await page.goto(`${gw.url}/console#/activity`);
      await page.waitForSelector('#filter-outcome');
      await page.selectOption('#filter-outcome', 'client_error');
      await page.click('#filter-apply');
      let outcomes: Array<string | null> = [];
      for (let t = 0; t < 100; t++) {
        outcomes = await page.$$eval('#records-table tbody tr .badge', (els) =>
          els.map((e) => e.getAttribute('title')),
        );
        if (outcomes.length === 2) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      expect(outcomes).to.deep.equal(['client_error', 'client_error']);
      await shot(page, `activity-client-errors-${width}`);
      await page.context().close();
    }
  });

  it("an HTML 502 from a proxy reads as a sentence, not a parser's error", async () => {
    const page = await open('desktop');
    await page.route('**/console/api/overview*', (route) =>
      route.fulfill({
        status: 502,
        contentType: 'text/html',
        body: '<html><body><h1>502 Bad Gateway</h1></body></html>',
      }),
    );
    await page.goto(`${gw.url}/console#/keys`);
    await page.goto(`${gw.url}/console#/overview`);
    await page.waitForSelector('.notice.error');
    const text = (await page.textContent('.notice.error')) ?? '';
    expect(text).to.include('HTTP 502').and.include('proxy').and.not.include('Unexpected token');
    await shot(page, 'proxy-502-desktop');
    await page.context().close();
  });

  it("unknown console paths show the app's not-found page (404); GET / leads to the console", async () => {
    const res = await fetch(`${gw.url}/console/no/such/page`);
    expect(res.status).to.equal(404);
    expect(res.headers.get('content-type')).to.include('text/html');
    const root = await fetch(`${gw.url}/`, { redirect: 'manual' });
    expect(root.status).to.equal(302);
    expect(root.headers.get('location')).to.equal('/console');
    for (const width of ['phone', 'desktop'] as const) {
      const page = await open(width, '/console/no/such/page');
      await page.waitForSelector('#not-found-home');
      expect(await page.textContent('main h1')).to.equal('Page not found');
      await shot(page, `not-found-${width}`);
      await page.click('#not-found-home');
      await page.waitForSelector('#page-overview');
      await page.context().close();
    }
  });

  it('265 keys: newest first, every one reachable page by page, found by search, deleted in two clicks', async () => {
    const a = await makeAccountKey(gw, { credits: 1, name: 'many-keys' });
    const made: Array<{ hash: string; name: string }> = [];
    for (let i = 0; i < 264; i++) {
      const r = await adminCall(gw, 'POST', '/v1/keys', {
        name: `bulk-${String(i).padStart(3, '0')}`,
        account_id: a.accountId,
      });
      made.push({ hash: (r.body.data as { hash: string }).hash, name: `bulk-${String(i).padStart(3, '0')}` });
    }
    for (const width of ['phone', 'desktop'] as const) {
      const page = await open(width, '/console#/keys');
      await page.goto(`${gw.url}/console#/keys`);
      await page.waitForSelector('#keys-table');
      const first = await page.$$eval('#keys-table tbody tr td:first-child', (els) => els.map((e) => e.textContent));
      expect(first[0]).to.equal('bulk-263'); // the newest
      expect(await overflows(page), `${width}: nothing runs off the screen`).to.equal(false);
      await shot(page, `keys-${width}`);
      await page.context().close();
    }
    const page = await open('desktop', '/console#/keys');
    await page.goto(`${gw.url}/console#/keys`);
    await page.waitForSelector('#keys-table');
    // Page by page to the oldest: every key of the account is reachable.
    const seen = new Set<string>();
    for (let i = 0; i < 20; i++) {
      for (const n of await page.$$eval('#keys-table tbody tr td:first-child', (els) =>
        els.map((e) => e.textContent ?? ''),
      ))
        seen.add(n);
      if (!(await page.$('#keys-older'))) break;
      const top = await page.textContent('#keys-table tbody tr td');
      await page.click('#keys-older');
      for (let t = 0; t < 100 && (await page.textContent('#keys-table tbody tr td')) === top; t++)
        await new Promise((r) => setTimeout(r, 50));
    }
    for (const m of made) expect(seen.has(m.name), m.name).to.equal(true);
    await page.fill('#keys-search', 'bulk-007');
    await page.press('#keys-search', 'Enter');
    await page.waitForSelector('#keys-table >> text=bulk-007');
    expect(await page.$$eval('#keys-table tbody tr', (els) => els.length)).to.equal(1);
    await page.click('[data-delete-key]');
    await page.click('[data-delete-key]');
    await page.waitForSelector('#keys-empty');
    expect((await adminCall(gw, 'GET', `/v1/keys/${made[7].hash}`)).status).to.equal(404);
    await shot(page, 'keys-deleted-desktop');
    await page.context().close();
  });
});
