import { expect } from 'chai';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../../helpers/loopback';
import { postJson, startTestGateway, testConfig, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../../helpers/accounts';
import { mcpClient, STDIO_SERVER, textOf } from '../mcp/helpers';
import { SHOTS, WIDTHS } from '../../helpers/screens';

type Rec = Record<string, unknown>;

interface Session {
  cookie: string;
  csrf: string;
}

/** A console session opened over HTTP: its cookie and CSRF token. */
async function signIn(gw: { url: string }, key: string): Promise<Session> {
  const res = await postJson(`${gw.url}/console/api/session`, { key });
  expect(res.status).to.equal(200);
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0];
  const me = (await (await fetch(`${gw.url}/console/api/me`, { headers: { cookie } })).json()) as {
    data: { csrf_token: string };
  };
  return { cookie, csrf: me.data.csrf_token };
}

/**
 * The console's Presets, Cache and MCP pages (issue 49), on the routing, cache and mcp plugins' admin sections
 * (decisions 0048, 0054): the routes with roles, CSRF, audit and the error catalogue, then each page in Chromium at
 * phone and desktop widths.
 */
describe('console: presets, cache and MCP pages', function () {
  this.timeout(180_000);
  let gw: TestGateway;
  let browser: Browser;
  let admin: Session;
  let viewer: Session;
  let viewerKey: string;
  let key: string;

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    gw = await startTestGateway(
      testConfig(
        {
          plugins: [
            'auth',
            'console',
            'credit',
            'storage',
            { cache: { models: ['mock/*'] } },
            { mcp: { servers: [{ name: 'files', ...STDIO_SERVER }] } },
            'routing',
          ],
          presets: [{ name: 'fixed', model: 'mock/gpt-4o-mini', system: 'From gateway.yaml' }],
        },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
    const acct = await makeAccountKey(gw, { name: 'manage-acct' });
    key = acct.key;
    const v = await adminCall(gw, 'POST', '/v1/keys', { name: 'viewer', account_id: acct.accountId, role: 'viewer' });
    admin = await signIn(gw, ADMIN_KEY);
    viewerKey = v.body.key as string;
    viewer = await signIn(gw, viewerKey);
    browser = await launchChromium();
    // The MCP server (a child process) is up when the gateway says it is ready.
    const ready = async () => ((await (await fetch(`${gw.url}/ready`)).json()) as { status: string }).status;
    for (let i = 0; i < 200 && (await ready()) !== 'ready'; i++) await new Promise((r) => setTimeout(r, 50));
  });
  after(async () => {
    await browser?.close();
    await gw?.stop();
  });

  const call = async (s: Session, method: string, path: string, body?: unknown, csrf = true) => {
    const res = await fetch(`${gw.url}/console/api/${path}`, {
      method,
      headers: {
        cookie: s.cookie,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(csrf ? { 'x-csrf-token': s.csrf } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : {}) as Rec };
  };
  const auditOf = async (action: string) =>
    ((await adminCall(gw, 'GET', `/v1/audit?action=${action}`)).body.data as Rec[]).filter(
      (r) => r.source === 'console',
    );

  describe('routes', () => {
    it('presets: a viewer lists and reads; an operator creates, changes and deletes, each audited', async () => {
      const list = await call(viewer, 'GET', 'settings/presets/item');
      expect(list.status).to.equal(200);
      expect((list.body.data as Rec[]).map((i) => i.id)).to.include('fixed');
      const put = { model: 'mock/gpt-4o-mini', params: { temperature: 0.2 }, system: 'Be brief' };
      const refused = await call(viewer, 'PUT', 'settings/presets/item/brief', put);
      expect(refused.status).to.equal(403);
      expect(refused.body.error).to.deep.include({ code: 'role_required' });
      expect((refused.body.error as Rec).message).to.include("'operator'");
      const made = await call(admin, 'PUT', 'settings/presets/item/brief', put);
      expect(made.status, JSON.stringify(made.body)).to.equal(200);
      expect(made.body.data).to.deep.include({ name: 'brief', source: 'store', system: 'Be brief' });
      // The preset is live: a request naming it gets its system prompt's model.
      const used = await postJson(
        `${gw.url}/v1/chat/completions`,
        { model: '@preset/brief', messages: [{ role: 'user', content: 'hi' }] },
        { authorization: `Bearer ${key}` },
      );
      expect(used.status).to.equal(200);
      expect((await call(viewer, 'GET', 'settings/presets/item/brief')).body.data).to.deep.include({
        system: 'Be brief',
      });
      const [set] = await auditOf('preset.set');
      expect(set).to.include({ target: 'item:brief', actor: 'admin' });
      expect((await call(admin, 'DELETE', 'settings/presets/item/brief')).status).to.equal(200);
      expect((await call(admin, 'GET', 'settings/presets/item/brief')).status).to.equal(404);
      expect(await auditOf('preset.delete')).to.have.length(1);
    });

    it('presets: bad input is a 400 naming the field; gateway.yaml presets are 409; no CSRF token is 403', async () => {
      const bad = await call(admin, 'PUT', 'settings/presets/item/x', { model: 'no/such-model' });
      expect(bad.status).to.equal(400);
      expect(bad.body.error).to.deep.include({
        type: 'invalid_request_error',
        param: 'model',
        code: 'model_not_found',
      });
      const shape = await call(admin, 'PUT', 'settings/presets/item/x', { model: 'mock/gpt-4o-mini', temperature: 1 });
      expect(shape.status).to.equal(400);
      expect(shape.body.error).to.have.keys('message', 'type', 'param', 'code');
      expect((await call(admin, 'PUT', 'settings/presets/item/fixed', { model: 'mock/gpt-4o-mini' })).status).to.equal(
        409,
      );
      const noCsrf = await call(admin, 'PUT', 'settings/presets/item/y', { model: 'mock/gpt-4o-mini' }, false);
      expect(noCsrf.status).to.equal(403);
      expect((await call(admin, 'GET', 'settings/presets/item/y')).status).to.equal(404);
    });

    it('cache: purge by model (operator, audited; a viewer gets 403; an empty purge is a 400), and a key setting', async () => {
      const ask = { model: 'mock/gpt-4o-mini', messages: [{ role: 'user', content: 'cache me' }], temperature: 0 };
      const auth = { authorization: `Bearer ${key}` };
      await postJson(`${gw.url}/v1/chat/completions`, ask, auth);
      expect((await postJson(`${gw.url}/v1/chat/completions`, ask, auth)).headers.get('x-gateway-cache')).to.equal(
        'hit',
      );
      expect(
        (await call(viewer, 'POST', 'settings/cache/actions/purge', { model: 'mock/gpt-4o-mini' })).status,
      ).to.equal(403);
      const empty = await call(admin, 'POST', 'settings/cache/actions/purge', {});
      expect(empty.status).to.equal(400);
      expect(empty.body.error).to.have.keys('message', 'type', 'param', 'code');
      const purged = await call(admin, 'POST', 'settings/cache/actions/purge', { model: 'mock/gpt-4o-mini' });
      expect(purged.body).to.deep.equal({ data: { deleted: 1 } });
      expect((await postJson(`${gw.url}/v1/chat/completions`, ask, auth)).headers.get('x-gateway-cache')).to.equal(
        'miss',
      );
      const [row] = await auditOf('cache.purge');
      expect(row).to.deep.include({ after: { deleted: 1 } });

      const hash = ((await adminCall(gw, 'GET', '/v1/keys?limit=200')).body.data as Rec[])[0].hash as string;
      const set = await call(admin, 'PUT', `settings/cache/key/${hash}`, { enabled: false });
      expect(set.body).to.deep.equal({ data: { enabled: false } });
      expect((await adminCall(gw, 'GET', `/v1/keys/${hash}/cache`)).body).to.deep.equal({ data: { enabled: false } });
      expect((await call(admin, 'PUT', `settings/cache/key/${hash}`, { enabled: 'no' })).status).to.equal(400);
      await call(admin, 'PUT', `settings/cache/key/${hash}`, { enabled: null });
    });

    it('mcp: the servers view and the call log filtered by tool and outcome, for a viewer', async () => {
      const c = await mcpClient(gw.url, key);
      expect(textOf(await c.callTool({ name: 'files__echo', arguments: { text: 'hello' } }))).to.equal('hello');
      await c.callTool({ name: 'files__env_secret', arguments: {} }).catch(() => undefined);
      await c.close();
      const servers = await call(viewer, 'GET', 'settings/mcp/views/servers');
      expect(servers.status).to.equal(200);
      const [files] = servers.body.data as Rec[];
      expect(files).to.include({ name: 'files', status: 'up' });
      expect(files.tool_names).to.include('files__echo');
      let calls: Rec[] = [];
      for (let i = 0; i < 40 && calls.length === 0; i++) {
        calls = (await call(viewer, 'GET', 'settings/mcp/views/calls?tool=echo')).body.data as Rec[];
        if (calls.length === 0) await new Promise((r) => setTimeout(r, 50));
      }
      expect(calls.map((r) => [r.tool, r.outcome])).to.deep.equal([['echo', 'ok']]);
      const ok = (await call(viewer, 'GET', 'settings/mcp/views/calls?outcome=ok')).body.data as Rec[];
      expect(ok.every((r) => r.outcome === 'ok')).to.equal(true);
      expect((await call(viewer, 'GET', 'settings/mcp/views/nothing')).status).to.equal(404);
    });
  });

  describe('pages', () => {
    async function open(width: keyof typeof WIDTHS, page: string, as = ADMIN_KEY): Promise<Page> {
      const context = await browser.newContext({ viewport: WIDTHS[width] });
      const p = await context.newPage();
      await p.goto(`${gw.url}/console`);
      await p.fill('#signin-key', as);
      await p.click('#signin-submit');
      await p.waitForSelector('main');
      await p.click(`#nav-${page}`);
      return p;
    }
    const shot = (page: Page, name: string) =>
      page.screenshot({ path: join(SHOTS, `manage-${name}.png`), fullPage: true });
    const overflows = (page: Page) =>
      page.evaluate('document.documentElement.scrollWidth > window.innerWidth + 1') as Promise<boolean>;

    it('a viewer reads the three pages without the controls that change anything', async () => {
      let page = await open('desktop', 'presets', viewerKey);
      await page.waitForSelector('#presets-list');
      expect(await page.$('#preset-new')).to.equal(null);
      expect(await page.$('[data-delete-preset]')).to.equal(null);
      await page.click('#presets-list a[data-preset="fixed"]');
      expect(await page.textContent('#preset-view')).to.include('From gateway.yaml');
      await page.click('#nav-cache');
      await page.waitForSelector('#cache-setting');
      expect(await page.$('#purge-card')).to.equal(null);
      await page.click('#nav-mcp');
      await page.waitForSelector('#mcp-servers');
      await page.context().close();
      // An account's own session sees none of them.
      page = await open('desktop', 'overview', key);
      expect(await page.$('#nav-presets')).to.equal(null);
      expect(await page.$('#nav-cache')).to.equal(null);
      expect(await page.$('#nav-mcp')).to.equal(null);
      await page.context().close();
    });

    for (const width of ['phone', 'desktop'] as const) {
      it(`${width}: Presets: create one with the form, see it listed, a bad model named in words, delete it`, async () => {
        const page = await open(width, 'presets');
        await page.waitForSelector('#presets-list');
        expect(await page.textContent('#presets-list'))
          .to.include('fixed')
          .and.include('gateway.yaml');
        await page.click('#preset-new');
        await page.fill('#preset-name', `web-${width}`);
        await page.fill('#preset-model', 'no/such-model');
        await page.click('#preset-save');
        await page.waitForSelector('#presets-notice .notice.error');
        expect(await page.textContent('#presets-notice')).to.include("No model 'no/such-model'");
        await page.fill('#preset-model', 'mock/gpt-4o-mini');
        await page.fill('#preset-params', '{"temperature": 0.3');
        await page.click('#preset-save');
        await page.waitForSelector('#presets-notice >> text=not valid JSON');
        await page.fill('#preset-params', '{"temperature": 0.3}');
        await page.fill('#preset-system', 'Answer in French.');
        await shot(page, `presets-form-${width}`);
        await page.click('#preset-save');
        await page.waitForSelector(`#presets-list a[data-preset="web-${width}"]`);
        expect(await page.textContent('#presets-notice')).to.include('saved');
        expect(await overflows(page), 'nothing runs off the screen').to.equal(false);
        await shot(page, `presets-${width}`);
        await page.click(`[data-delete-preset="web-${width}"]`);
        expect(await page.textContent(`[data-delete-preset="web-${width}"]`)).to.include('for good');
        await page.click(`[data-delete-preset="web-${width}"]`);
        await page.waitForSelector(`#presets-notice >> text=web-${width} deleted`);
        expect(await page.$(`#presets-list a[data-preset="web-${width}"]`)).to.equal(null);
        await page.context().close();
      });

      it(`${width}: Cache: the purge says what it will delete before it does; a key's setting is saved`, async () => {
        const page = await open(width, 'cache');
        await page.waitForSelector('#purge-card');
        await page.selectOption('#purge-model', 'mock/gpt-4o-mini');
        await page.click('#purge-submit');
        expect(await page.textContent('#purge-submit')).to.equal('Delete the entries of model mock/gpt-4o-mini?');
        await shot(page, `cache-confirm-${width}`);
        await page.click('#purge-submit');
        await page.waitForSelector('#cache-notice .notice.ok');
        expect(await page.textContent('#cache-notice')).to.match(/Purged: \d+ entries deleted/);
        const option = (await page.getAttribute('#cache-subject option:nth-child(2)', 'value')) ?? '';
        await page.selectOption('#cache-subject', option);
        await page.waitForSelector('#cache-enabled:not([disabled])');
        await page.selectOption('#cache-enabled', 'false');
        await page.click('#cache-save');
        await page.waitForSelector('#cache-notice >> text=does not use the cache');
        expect(await overflows(page)).to.equal(false);
        await shot(page, `cache-${width}`);
        await page.selectOption('#cache-enabled', '');
        await page.click('#cache-save');
        await page.waitForSelector('#cache-notice >> text=the default');
        await page.context().close();
      });

      it(`${width}: a Responses request's remote MCP call reads in its record: the server, the tool, its result`, async () => {
        const res = await postJson(
          `${gw.url}/v1/responses`,
          {
            model: 'mock/gpt-4o-mini',
            input: 'Please use files__echo',
            tools: [{ type: 'mcp', server_label: 'files', allowed_tools: ['echo'], require_approval: 'never' }],
          },
          { authorization: `Bearer ${key}` },
        );
        expect(res.status, await res.clone().text()).to.equal(200);
        const id = ((await res.json()) as { id: string }).id;
        // Stored under the id the client got, though the answer came from a later round (`<id>_r1`).
        const stored = await fetch(`${gw.url}/v1/responses/${id}`, { headers: { authorization: `Bearer ${key}` } });
        expect(stored.status).to.equal(200);
        const page = await open(width, 'activity');
        await page.click(`#records-table a[data-id="${id}"]`);
        await page.waitForSelector('#record-answer');
        const roles = await page.$$eval('#record-answer .turn .role', (els) => els.map((e) => e.textContent));
        expect(roles).to.deep.equal(['MCP · files', 'MCP · files', 'assistant']);
        const answer = (await page.textContent('#record-answer')) ?? '';
        expect(answer).to.include('Listed tools: echo').and.include('Calls tool echo').and.include('mock text');
        await page.screenshot({ path: join(SHOTS, `manage-record-mcp-${width}.png`) });
        // The second model round's record points at the response, and opens it.
        await page.click('#record-close');
        await page.click(`#records-table a[data-id="${id}_r1"]`);
        await page.waitForSelector('#record-first-round');
        expect(await page.textContent('#record-no-response')).to.include(`Model round 2 of response ${id}`);
        await page.click('#record-first-round');
        await page.waitForSelector('#record-answer');
        expect(await page.textContent('#record-title'))
          .to.include(id)
          .and.not.include('_r1');
        await page.context().close();
      });

      it(`${width}: MCP: the server with its tools, the call log filtered by outcome`, async () => {
        const page = await open(width, 'mcp');
        await page.waitForSelector('#mcp-servers');
        expect(await page.textContent('#mcp-servers'))
          .to.include('files')
          .and.include('echo');
        await page.waitForSelector('#mcp-calls');
        await page.selectOption('#calls-outcome', 'ok');
        await page.click('#calls-apply');
        // The unfiltered log has the failed call too: wait for the filtered table (the page's CSP forbids eval).
        let outcomes: Array<string | null> = [];
        for (let t = 0; t < 100; t++) {
          outcomes = await page.$$eval('#mcp-calls tbody tr .badge', (els) => els.map((e) => e.textContent));
          if (outcomes.length > 0 && outcomes.every((o) => o === 'ok')) break;
          await new Promise((r) => setTimeout(r, 50));
        }
        expect(outcomes).to.include('ok').and.not.include('error');
        expect(await page.textContent('#mcp-calls')).to.include('files / echo');
        expect(await overflows(page)).to.equal(false);
        await shot(page, `mcp-${width}`);
        await page.context().close();
      });
    }
  });
});
