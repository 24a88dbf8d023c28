import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, Page } from 'playwright-core';
import { fromObject } from '../../../src/config/load';
import { cliActor } from '../../../src/cli/store-cli';
import { launchChromium } from '../../helpers/loopback';
import { startTestGateway, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall } from '../../helpers/accounts';
import { SHOTS, WIDTHS } from '../../helpers/screens';

const run = promisify(execFile);

interface Audit {
  actor: string;
  role: string;
  source: string;
  action: string;
  target: string;
  before: unknown;
  after: unknown;
}

/**
 * `gateway keys limits` and `gateway accounts limits` write the audit log as the admin API and the console do
 * (`limits.set` on `key:<hash>` / `account:<id>`, before and after), with the CLI and who ran it as the actor; a call
 * that only shows or is refused writes nothing. The console's audit page shows them, in Debian's Chromium at phone and
 * desktop widths (screenshots under .tmp/screenshots).
 */
describe('gateway keys/accounts limits: audited like the admin API and the console', function () {
  this.timeout(120_000);
  const dir = mkdtempSync(join(tmpdir(), 'gw-cli-audit-'));
  const cfgPath = join(dir, 'g.yaml');
  const settings = {
    store: { driver: 'sqlite', path: join(dir, 'g.db') },
    providers: [{ name: 'mock', type: 'mock' }],
    models: [{ id: 'mock/a', deployments: [{ provider: 'mock', model: 'x' }] }],
    plugins: ['auth', 'console', 'limits', 'routing'],
  };
  const cli = async (...args: string[]) =>
    (
      await run(process.execPath, ['--require', 'tsx/cjs', 'src/cli.ts', ...args, '--config', cfgPath], {
        env: { ...process.env, GATEWAY_ADMIN_KEY: ADMIN_KEY },
      })
    ).stdout;
  let gw: TestGateway;
  let browser: Browser;
  let hash = '';
  let accountId = '';

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    writeFileSync(cfgPath, JSON.stringify(settings));
    gw = await startTestGateway(
      fromObject({ ...settings, server: { port: 0, log_level: 'silent' } }, { env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } }),
    );
    browser = await launchChromium();
    const a = await adminCall(gw, 'POST', '/v1/accounts', { name: 'audited-team', credits: 5 });
    accountId = (a.body.data as { id: string }).id;
    const k = await adminCall(gw, 'POST', '/v1/keys', { name: 'audited-key', account_id: accountId });
    hash = (k.body.data as { hash: string }).hash;
  });
  after(async () => {
    await browser?.close();
    await gw?.stop();
  });

  const log = async (q: string) => (await adminCall(gw, 'GET', `/v1/audit?${q}`)).body.data as Audit[];

  it('each change is one limits.set row, actor the CLI and its user; showing or a refused change writes none', async () => {
    await cli('keys', 'limits', 'audited-key', '--models', 'mock/*', '--rpm', '7');
    await cli('accounts', 'limits', 'audited-team', '--tpm', '1000', '--alert-balance', '2');
    await cli('keys', 'limits', 'audited-key');
    const refused = await cli('keys', 'limits', 'audited-key', '--rpm=1.5').then(
      () => 0,
      (e: { code: number }) => e.code,
    );
    expect(refused).to.equal(2);
    // The admin API's own row, for comparison: the same action and target, another source and actor.
    expect((await adminCall(gw, 'PUT', `/v1/keys/${hash}/limits`, { rate_limits: { rpm: 8 } })).status).to.equal(200);

    const rows = await log('action=limits.set');
    expect(rows.map((r) => [r.source, r.target])).to.deep.equal([
      ['admin_api', `key:${hash}`],
      ['cli', `account:${accountId}`],
      ['cli', `key:${hash}`],
    ]);
    const [, account, key] = rows;
    expect(cliActor()).to.match(/^cli:[^@]+@/);
    expect(key).to.include({ actor: cliActor(), role: 'admin', source: 'cli' });
    expect(key.before).to.deep.equal({ allowed_models: null, rate_limits: null, budget_alerts: null });
    expect(key.after).to.deep.equal({ allowed_models: ['mock/*'], rate_limits: { rpm: 7 }, budget_alerts: null });
    expect(account.after).to.deep.equal({
      allowed_models: null,
      rate_limits: { tpm: 1000 },
      budget_alerts: { account_balance_below: [2] },
    });
    expect(rows[0].actor).to.equal('admin');
  });

  async function open(width: keyof typeof WIDTHS): Promise<Page> {
    const page = await (await browser.newContext({ viewport: WIDTHS[width] })).newPage();
    await page.goto(`${gw.url}/console#/audit`);
    await page.fill('#signin-key', ADMIN_KEY);
    await page.click('#signin-submit');
    await page.waitForSelector('#audit-table');
    return page;
  }

  it("the console's audit log shows the CLI's changes with who ran them, at both widths", async () => {
    for (const width of ['phone', 'desktop'] as const) {
      const page = await open(width);
      await page.selectOption('#audit-source', 'cli');
      await page.fill('#audit-action', 'limits.set');
      await page.click('#audit-apply');
      // The filtered page: the two CLI rows only (polled from here: the console's CSP refuses a string predicate).
      const sources = () => page.$$eval('#audit-table tbody td:nth-child(4)', (tds) => tds.map((t) => t.textContent));
      for (let t = 0; t < 200 && (await sources()).join() !== 'cli,cli'; t++)
        await new Promise((r) => setTimeout(r, 25));
      expect(await sources()).to.deep.equal(['cli', 'cli']);
      const actors = await page.$$eval('#audit-table tbody td:nth-child(2)', (tds) => tds.map((t) => t.textContent));
      expect(actors).to.deep.equal([cliActor(), cliActor()]);
      expect(await page.textContent('#audit-table tbody tr:last-child')).to.include(`key:${hash}`);
      expect(
        await page.evaluate('document.documentElement.scrollWidth > window.innerWidth + 1'),
        `${width}: nothing runs off the screen`,
      ).to.equal(false);
      await page.screenshot({ path: join(SHOTS, `cli-audit-${width}.png`), fullPage: true });
      await page.context().close();
    }
  });
});
