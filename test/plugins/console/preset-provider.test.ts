import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../../helpers/loopback';
import { MOCK_MODEL, startTestGateway, testConfig, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../../helpers/accounts';
import { SHOTS, WIDTHS } from '../../helpers/screens';

/**
 * A preset's provider preferences on the Presets page (issue 49): shown as a labelled list, edited with a form of
 * their fields (lists, choices, prices) whose mistakes are sentences naming the field before anything is sent; the
 * server's own refusal (an unknown provider) shown as it says. Debian's Chromium at phone and desktop widths,
 * photographed under .tmp/screenshots.
 */
describe('operator console (browser): a preset’s provider preferences as a form', function () {
  this.timeout(180_000);
  let gw: TestGateway;
  let browser: Browser;

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    gw = await startTestGateway(
      testConfig(
        {
          providers: [
            { name: 'mock', type: 'mock' },
            { name: 'backup', type: 'mock' },
          ],
          models: [
            {
              ...MOCK_MODEL,
              deployments: [
                { provider: 'mock', model: 'mock-small' },
                { provider: 'backup', model: 'mock-small' },
              ],
            },
          ],
          plugins: ['auth', 'console', 'credit', 'routing'],
          presets: [
            {
              name: 'fixed',
              model: 'mock/gpt-4o-mini',
              provider: { order: ['mock', 'backup'], data_collection: 'deny', max_price: { completion: 3 } },
              params: { temperature: 0.1 },
            },
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

  async function open(width: keyof typeof WIDTHS): Promise<Page> {
    const page = await (await browser.newContext({ viewport: WIDTHS[width] })).newPage();
    await page.goto(`${gw.url}/console#/presets`);
    await page.fill('#signin-key', ADMIN_KEY);
    await page.click('#signin-submit');
    await page.waitForSelector('#presets-list');
    return page;
  }
  const shot = (page: Page, name: string) =>
    page.screenshot({ path: join(SHOTS, `preset-provider-${name}.png`), fullPage: true });
  const overflows = (page: Page) =>
    page.evaluate('document.documentElement.scrollWidth > window.innerWidth + 1') as Promise<boolean>;
  async function save(page: Page): Promise<string> {
    await page.evaluate('document.querySelector("#presets-notice").replaceChildren()');
    await page.click('#preset-save');
    await page.waitForSelector('#presets-notice .notice');
    return (await page.textContent('#presets-notice')) ?? '';
  }
  const stored = async (name: string) =>
    (await adminCall(gw, 'GET', `/v1/presets/${name}`)).body.data as { provider?: unknown } | undefined;

  for (const width of ['phone', 'desktop'] as const)
    it(`${width}: written with the form, mistakes named in words, listed readably, opened again as it was`, async () => {
      const name = `routed-${width}`;
      const page = await open(width);
      await page.click('#preset-new');
      await page.fill('#preset-name', name);
      await page.fill('#preset-model', 'mock/gpt-4o-mini');
      await page.fill('#provider-order', 'backup, mock');
      await page.selectOption('#provider-fallbacks', 'false');
      await page.selectOption('#provider-sort', 'price');
      await page.fill('#provider-max-prompt', '5');
      await page.fill('#provider-ignore', 'open ai');
      expect(await save(page)).to.equal(
        'Providers: Never: "open ai" is not a provider name (letters, digits, _ . - as in providers[])',
      );
      await page.fill('#provider-ignore', 'nosuch');
      expect(await save(page)).to.include("No provider named 'nosuch'");
      await page.fill('#provider-ignore', '');
      await page.fill('#preset-params', '[0.2]');
      expect(await save(page)).to.equal(
        'Default parameters: an object of request parameters, e.g. {"temperature": 0.2}',
      );
      expect((await adminCall(gw, 'GET', `/v1/presets/${name}`)).status, 'nothing stored yet').to.equal(404);
      await page.fill('#preset-params', '{"temperature": 0.2}');
      if (width === 'phone') expect(await overflows(page), 'the form fits the phone').to.equal(false);
      await shot(page, `form-${width}`);
      expect(await save(page)).to.include('saved');
      expect((await stored(name))?.provider).to.deep.equal({
        order: ['backup', 'mock'],
        allow_fallbacks: false,
        sort: 'price',
        max_price: { prompt: 5 },
      });
      const card = (await page.textContent(`#presets-list li:has(a[data-preset="${name}"])`)) ?? '';
      expect(card).to.include('Try first, in order: backup → mock').and.include('Other providers after these: no');
      expect(card).to.include('Max price: 5 prompt, per million tokens').and.not.include('{"order"');
      expect(await overflows(page)).to.equal(false);
      await shot(page, `list-${width}`);

      // Opened again: the controls hold what was stored; clearing the sort and the price removes them.
      await page.click(`#presets-list a[data-preset="${name}"]`);
      expect(await page.inputValue('#provider-order')).to.equal('backup, mock');
      expect(await page.inputValue('#provider-fallbacks')).to.equal('false');
      expect(await page.inputValue('#provider-sort')).to.equal('price');
      await page.selectOption('#provider-sort', '');
      await page.fill('#provider-max-prompt', '');
      expect(await save(page)).to.include('saved');
      expect((await stored(name))?.provider).to.deep.equal({ order: ['backup', 'mock'], allow_fallbacks: false });
      await page.context().close();
    });

  it("gateway.yaml's preset reads as a labelled list, not JSON; a request through a stored one is served", async () => {
    const page = await open('phone');
    await page.click('#presets-list a[data-preset="fixed"]');
    await page.waitForSelector('#preset-view');
    const text = (await page.textContent('#preset-view')) ?? '';
    expect(text).to.include('Try first, in order').and.include('mock → backup');
    expect(text).to.include('Data collection').and.include('deny');
    expect(text).to.include('temperature 0.1').and.not.include('{');
    await shot(page, 'view-phone');
    await page.context().close();

    const { key } = await makeAccountKey(gw, { credits: 5 });
    const r = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: '@preset/routed-desktop', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(r.status).to.equal(200);
  });
});
