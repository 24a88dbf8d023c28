import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../../helpers/loopback';
import { startTestGateway, testConfig, postJson, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../../helpers/accounts';
import { SHOTS, WIDTHS } from '../../helpers/screens';

/**
 * An empty model allowlist (decision 0064): not set (null) is every model, an empty list ([]) no model, in the API and
 * in the console, where the two are choices of their own beside "only these", a list chosen but left empty is refused
 * in words, and a key that may use no model still shows so (saving another field leaves it so). Debian's Chromium,
 * photographed under .tmp/screenshots at phone and desktop widths.
 */
describe('operator console (browser): an empty model allowlist says which it is', function () {
  this.timeout(120_000);
  let gw: TestGateway;
  let browser: Browser;

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    gw = await startTestGateway(
      testConfig(
        { plugins: ['auth', 'console', 'limits', 'credit', { mcp: { servers: [] } }, 'routing'] },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await gw?.stop();
  });

  const chat = (key: string) =>
    postJson(
      `${gw.url}/v1/chat/completions`,
      { model: 'mock/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] },
      { authorization: `Bearer ${key}` },
    );
  const limits = async (hash: string) =>
    (await adminCall(gw, 'GET', `/v1/keys/${hash}/limits`)).body.data as { allowed_models: string[] | null };

  it('the API: null (or never set) is every model, [] no model (403 model_not_allowed); the form says both', async () => {
    const { key, hash } = await makeAccountKey(gw, { credits: 5 });
    expect((await limits(hash)).allowed_models).to.equal(null);
    expect((await chat(key)).status).to.equal(200);
    const none = await adminCall(gw, 'PUT', `/v1/keys/${hash}/limits`, { allowed_models: [] });
    expect(none.status).to.equal(200);
    expect((none.body.data as { allowed_models: unknown }).allowed_models).to.deep.equal([]);
    const refused = await chat(key);
    expect(refused.status).to.equal(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).to.equal('model_not_allowed');
    expect((await adminCall(gw, 'PUT', `/v1/keys/${hash}/limits`, { allowed_models: null })).status).to.equal(200);
    expect((await chat(key)).status).to.equal(200);

    const sections = await fetch(`${gw.url}/console/api/settings`, {
      headers: { cookie: await sessionCookie() },
    }).then((r) => r.json() as Promise<{ data: Array<{ name: string; fields: Array<Record<string, string>> }> }>);
    const field = sections.data.find((s) => s.name === 'limits')?.fields.find((f) => f.path === 'allowed_models');
    expect(field).to.include({ placeholder: 'every model', empty: 'no model' });
    expect(field?.help).to.include('Not set (null): every model').and.include('no model: an empty list ([])');
  });

  async function sessionCookie(): Promise<string> {
    const r = await postJson(`${gw.url}/console/api/session`, { key: ADMIN_KEY });
    return (r.headers.get('set-cookie') ?? '').split(';')[0];
  }

  async function open(width: keyof typeof WIDTHS, hash: string): Promise<Page> {
    const page = await (await browser.newContext({ viewport: WIDTHS[width] })).newPage();
    await page.goto(`${gw.url}/console#/keys?key=${hash}`);
    await page.fill('#signin-key', ADMIN_KEY);
    await page.click('#signin-submit');
    await page.waitForSelector('#detail form[data-section="limits"]');
    return page;
  }
  const mode = '#detail select[data-mode="allowed_models"]';
  const list = '#detail label[data-path="allowed_models"] input';
  const shot = (page: Page, name: string) =>
    page.screenshot({ path: join(SHOTS, `allowlist-${name}.png`), fullPage: true });
  async function save(page: Page): Promise<string> {
    await page.evaluate('document.querySelector("#detail .form-status").replaceChildren()');
    await page.click('[data-save="limits"]');
    await page.waitForSelector('#detail .form-status .notice');
    return (await page.textContent('#detail .form-status .notice')) ?? '';
  }

  it('the console: "only these" left empty is refused in words; "no model" is kept as such; "every model" clears it', async () => {
    const { key, hash } = await makeAccountKey(gw, { credits: 5, name: 'allowlist-key' });
    const page = await open('phone', hash);
    expect(await page.inputValue(mode)).to.equal('unset');
    expect(await page.isVisible(list), 'the list shows only for "only these"').to.equal(false);
    await page.selectOption(mode, 'list');
    expect(await page.isVisible(list)).to.equal(true);
    expect(await save(page)).to.equal('Allowed models: list at least one, or choose "Every model" or "No model"');
    expect((await limits(hash)).allowed_models, 'nothing written').to.equal(null);
    await shot(page, 'only-these-empty-phone');

    await page.selectOption(mode, 'empty');
    expect(await save(page)).to.include('saved');
    expect((await limits(hash)).allowed_models).to.deep.equal([]);
    await page.waitForSelector('[data-key-summary] >> text=models: none');
    expect((await chat(key)).status).to.equal(403);
    await shot(page, 'no-model-phone');
    await page.context().close();

    // Opened again: "no model" is what it shows, and saving another field keeps it (never widened to every model).
    const wide = await open('desktop', hash);
    expect(await wide.inputValue(mode)).to.equal('empty');
    await wide.fill('#detail label[data-path="rate_limits.rpm"] input', '5');
    expect(await save(wide)).to.include('saved');
    expect(await limits(hash)).to.deep.include({ allowed_models: [], rate_limits: { rpm: 5 } });
    await shot(wide, 'no-model-kept-desktop');

    await wide.selectOption(mode, 'list');
    await wide.fill(list, 'mock/*, other/x');
    expect(await save(wide)).to.include('saved');
    expect((await limits(hash)).allowed_models).to.deep.equal(['mock/*', 'other/x']);
    await wide.selectOption(mode, 'unset');
    expect(await save(wide)).to.include('saved');
    expect((await limits(hash)).allowed_models).to.equal(null);
    expect((await chat(key)).status).to.equal(200);
    await shot(wide, 'every-model-desktop');
    await wide.context().close();
  });
  it("the MCP plugin's tool allowlist has the same three choices: no tool is [] in its API", async () => {
    const { hash } = await makeAccountKey(gw, { credits: 5, name: 'mcp-key' });
    const page = await open('phone', hash);
    const tools = '#detail select[data-mode="tools"]';
    await page.waitForSelector(tools);
    expect(await page.inputValue(tools)).to.equal('unset');
    expect(await page.textContent(`${tools} option[value="unset"]`)).to.equal(
      "What gateway.yaml's access says (not set)",
    );
    await page.selectOption(tools, 'empty');
    await page.click('[data-save="mcp"]');
    await page.waitForSelector('#detail form[data-section="mcp"] .notice.ok');
    expect((await adminCall(gw, 'GET', `/v1/mcp/access/keys/${hash}`)).body.data).to.deep.equal({ tools: [] });
    await shot(page, 'mcp-no-tool-phone');
    await page.context().close();
  });
});
