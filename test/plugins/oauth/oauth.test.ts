import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../../helpers/loopback';
import { startTestGateway, testConfig, postJson, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, makeAccountKey } from '../../helpers/accounts';
import { s256 } from '../../../plugins/oauth/pkce';

/** A loopback "third-party app" that receives the OAuth callback. */
async function callbackApp(): Promise<{ url: string; hits: URL[]; server: Server }> {
  const hits: URL[] = [];
  const server = createServer((req, res) => {
    hits.push(new URL(req.url ?? '/', 'http://localhost'));
    res.writeHead(200, { 'content-type': 'text/html' }).end('<p id="done">back at the app</p>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://localhost:${(server.address() as AddressInfo).port}/callback`, hits, server };
}

describe('OAuth PKCE key issuance', () => {
  let gw: TestGateway;
  let app: Awaited<ReturnType<typeof callbackApp>>;
  const verifier = randomBytes(48).toString('base64url');
  before(async () => {
    gw = await startTestGateway(
      testConfig(
        {
          plugins: [
            'auth',
            { oauth: { callback_allowlist: ['https://app.example'], allow_localhost: true } },
            'credit',
            'routing',
          ],
        },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
    app = await callbackApp();
  });
  after(async () => {
    await gw.stop();
    app.server.close();
  });

  /** Post the consent form as the browser does: after loading the page (its CSRF cookie and token), from this origin. */
  const consent = async (form: Record<string, string>) => {
    const q = {
      callback_url: form.callback_url,
      code_challenge: form.code_challenge,
      code_challenge_method: form.code_challenge_method,
    };
    const page = await fetch(`${gw.url}/auth?${new URLSearchParams(q).toString()}`);
    const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())?.[1] ?? '';
    const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0];
    return fetch(`${gw.url}/auth/consent`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, origin: gw.url },
      body: new URLSearchParams({ csrf, ...form }).toString(),
    });
  };

  it('refuses bad authorization requests: callback not allowed, no S256 challenge, plain without permission', async () => {
    const q = (p: Record<string, string>) => fetch(`${gw.url}/auth?${new URLSearchParams(p).toString()}`);
    expect(
      (
        await q({
          callback_url: 'https://evil.example/cb',
          code_challenge: s256(verifier),
          code_challenge_method: 'S256',
        })
      ).status,
    ).to.equal(403);
    expect((await q({ callback_url: app.url, code_challenge: 'short' })).status).to.equal(400);
    const plain = await q({ callback_url: app.url, code_challenge: verifier, code_challenge_method: 'plain' });
    expect(plain.status).to.equal(400);
    expect(((await plain.json()) as { error: { code: string } }).error.code).to.equal('invalid_code_challenge_method');
    const ok = await q({
      callback_url: 'https://app.example/cb',
      code_challenge: s256(verifier),
      code_challenge_method: 'S256',
    });
    expect(ok.status).to.equal(200);
    expect(await ok.text()).to.include('https://app.example');
  });

  it('approve -> code -> key (named after the site, with the chosen limit); codes are single-use; a wrong verifier creates nothing', async () => {
    const { key, accountId } = await makeAccountKey(gw, { credits: 5 });
    // The user approves the app with a limit of 1.5 credits on the key.
    const approve = () =>
      consent({
        callback_url: app.url,
        code_challenge: s256(verifier),
        code_challenge_method: 'S256',
        key,
        limit: '1.5',
        action: 'approve',
      });
    const res = await approve();
    expect(res.status).to.equal(302);
    const code = new URL(res.headers.get('location') as string).searchParams.get('code') as string;
    expect(code).to.match(/^[A-Za-z0-9_-]{43}$/);
    const before = (await gw.services.store.keys.list({ accountId, limit: 100, offset: 0 })).length;
    const wrong = await postJson(`${gw.url}/v1/auth/keys`, {
      code,
      code_verifier: randomBytes(48).toString('base64url'),
      code_challenge_method: 'S256',
    });
    expect(wrong.status).to.equal(403);
    expect((await gw.services.store.keys.list({ accountId, limit: 100, offset: 0 })).length).to.equal(before);
    // The code was consumed by the failed attempt too: a code is good for one exchange.
    const again = await postJson(`${gw.url}/v1/auth/keys`, {
      code,
      code_verifier: verifier,
      code_challenge_method: 'S256',
    });
    expect(again.status).to.equal(403);
    const res2 = await approve();
    const code2 = new URL(res2.headers.get('location') as string).searchParams.get('code') as string;
    const ok = await postJson(`${gw.url}/v1/auth/keys`, {
      code: code2,
      code_verifier: verifier,
      code_challenge_method: 'S256',
    });
    expect(ok.status).to.equal(200);
    const body = (await ok.json()) as { key: string; user_id: string; data: { name: string; limit: number } };
    expect(body.user_id).to.equal(accountId);
    expect(body.data).to.include({ name: new URL(app.url).origin, limit: 1.5 });
    expect((await postJson(`${gw.url}/v1/auth/keys`, { code: code2, code_verifier: verifier })).status).to.equal(403);
  });

  it('deny redirects with error=access_denied; a wrong key shows the page again with an error', async () => {
    const deny = await consent({
      callback_url: app.url,
      code_challenge: s256(verifier),
      code_challenge_method: 'S256',
      action: 'deny',
    });
    expect(new URL(deny.headers.get('location') as string).searchParams.get('error')).to.equal('access_denied');
    const bad = await consent({
      callback_url: app.url,
      code_challenge: s256(verifier),
      code_challenge_method: 'S256',
      key: 'sk-gw-nope',
      action: 'approve',
    });
    expect(bad.status).to.equal(401);
    expect(await bad.text()).to.include('That key was not accepted');
  });

  describe('in a real browser (headless Chromium)', function () {
    let browser: Browser;
    before(async function () {
      browser = await launchChromium();
    });
    after(async () => browser?.close());

    it('approve: the user proves who they are, the app gets a code, exchanges it, and the key completes a chat request', async () => {
      const { key } = await makeAccountKey(gw, { credits: 5 });
      const page = await browser.newPage();
      await page.goto(
        `${gw.url}/auth?${new URLSearchParams({ callback_url: app.url, code_challenge: s256(verifier), code_challenge_method: 'S256' }).toString()}`,
      );
      expect(await page.textContent('#site')).to.equal(new URL(app.url).origin);
      await page.fill('#key', key);
      await page.fill('#limit', '2');
      await Promise.all([page.waitForURL(/\/callback\?code=/), page.click('#approve')]);
      const code = new URL(page.url()).searchParams.get('code') as string;
      await page.close();
      const ex = (await (
        await postJson(`${gw.url}/v1/auth/keys`, { code, code_verifier: verifier, code_challenge_method: 'S256' })
      ).json()) as { key: string };
      const chat = await postJson(
        `${gw.url}/v1/chat/completions`,
        { model: 'mock/gpt-4o-mini', messages: [{ role: 'user', content: 'hello from the app' }] },
        { authorization: `Bearer ${ex.key}` },
      );
      expect(chat.status).to.equal(200);
      expect(
        ((await chat.json()) as { choices: Array<{ message: { content: string } }> }).choices[0].message.content,
      ).to.equal('Mock answer: hello from the app');
    });

    it('deny: the app gets error=access_denied', async () => {
      const page = await browser.newPage();
      await page.goto(
        `${gw.url}/auth?${new URLSearchParams({ callback_url: app.url, code_challenge: s256(verifier), code_challenge_method: 'S256' }).toString()}`,
      );
      await Promise.all([page.waitForURL(/\/callback\?error=access_denied/), page.click('#deny')]);
      expect(await page.textContent('#done')).to.equal('back at the app');
      await page.close();
    });
  });
});
