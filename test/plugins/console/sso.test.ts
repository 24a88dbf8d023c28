import { expect } from 'chai';
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../../helpers/loopback';
import { parseConfig } from '../../../src/config/load';
import { MOCK_MODEL, startTestGateway, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall } from '../../helpers/accounts';
import { mapRole } from '../../../plugins/console/sso';

const SHOTS = mkdtempSync(join(tmpdir(), 'gw-sso-shots-'));
const CLIENT_ID = 'gateway-console';
const CLIENT_SECRET = randomBytes(24).toString('hex');
const ROLES = { 'gw-admins': 'admin', 'gw-operators': 'operator', 'gw-viewers': 'viewer' };
/** The provider's users: login name -> groups (the role claim). */
const USERS: Record<string, string[]> = {
  alice: ['gw-admins', 'staff'],
  olivia: ['staff', 'gw-operators', 'gw-viewers'],
  victor: ['gw-viewers'],
  nobody: ['staff'],
};

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

/** A real OpenID Provider (oidc-provider, panva's) on loopback, with its dev login form and the users above. */
async function startProvider(server: Server, issuer: string, redirectUri: string): Promise<void> {
  // oidc-provider ships no types (its DefinitelyTyped package lags a major); the few calls made here are typed inline.
  const specifier = 'oidc-provider';
  const { default: Provider } = (await import(specifier)) as {
    default: new (issuer: string, config: never) => { callback(): (req: unknown, res: unknown) => void };
  };
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    claims: { openid: ['sub'], email: ['email'], groups: ['groups'] },
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: true } },
    cookies: { keys: [randomBytes(16).toString('hex')] },
    findAccount: (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: () => ({ sub: id, email: `${id}@example.test`, groups: USERS[id] ?? [] }),
    }),
    // Consent is given once for the console (a company's own provider does not ask each user).
    async loadExistingGrant(ctx: {
      oidc: {
        client: { clientId: string };
        session: { accountId: string };
        provider: { Grant: new (o: object) => Rec };
      };
    }) {
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client.clientId,
        accountId: ctx.oidc.session.accountId,
      });
      (grant.addOIDCScope as (s: string) => void)('openid email groups');
      await (grant.save as () => Promise<string>)();
      return grant;
    },
  } as never);
  server.on('request', provider.callback());
}

type Rec = Record<string, unknown>;
type Mode = 'good' | 'other-issuer' | 'other-audience' | 'expired' | 'foreign-key';

const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

/**
 * A provider that misbehaves on purpose (the real one never issues such tokens): discovery, JWKS, an authorize step that
 * answers at once, and a token endpoint whose ID token is signed with its key but names another issuer or audience, has
 * expired, or is signed with a key the issuer does not publish. `good` shows the same provider is otherwise accepted.
 */
function startBadProvider(server: Server, issuer: string) {
  const key = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const foreign = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...(key.publicKey.export({ format: 'jwk' }) as Rec), kid: 'k1', use: 'sig', alg: 'RS256' };
  const state = { mode: 'good' as Mode, nonce: '', challenge: '' };
  const idToken = (claims: Rec, privateKey: KeyObject) => {
    const input = `${b64({ alg: 'RS256', kid: 'k1', typ: 'JWT' })}.${b64(claims)}`;
    return `${input}.${sign('sha256', Buffer.from(input), privateKey).toString('base64url')}`;
  };
  server.on('request', (req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    const json = (v: unknown) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(v));
    };
    if (url.pathname === '/.well-known/openid-configuration')
      return json({
        issuer,
        authorization_endpoint: `${issuer}/auth`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_post'],
      });
    if (url.pathname === '/jwks') return json({ keys: [jwk] });
    if (url.pathname === '/auth') {
      state.nonce = url.searchParams.get('nonce') ?? '';
      state.challenge = url.searchParams.get('code_challenge') ?? '';
      const back = new URL(url.searchParams.get('redirect_uri') as string);
      back.searchParams.set('code', 'bad-provider-code');
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      res.statusCode = 302;
      res.setHeader('location', back.href);
      return res.end();
    }
    if (url.pathname === '/token') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        const verifier = form.get('code_verifier') ?? '';
        if (createHash('sha256').update(verifier).digest('base64url') !== state.challenge) {
          res.statusCode = 400;
          return json({ error: 'invalid_grant' });
        }
        const now = Math.floor(Date.now() / 1000);
        const m = state.mode;
        const claims = {
          iss: m === 'other-issuer' ? 'http://127.0.0.1:1/another-issuer' : issuer,
          aud: m === 'other-audience' ? 'another-client' : CLIENT_ID,
          sub: 'mallory',
          groups: ['gw-admins'],
          nonce: state.nonce,
          iat: m === 'expired' ? now - 7200 : now,
          exp: m === 'expired' ? now - 3600 : now + 300,
        };
        json({
          access_token: randomBytes(16).toString('hex'),
          token_type: 'Bearer',
          expires_in: 300,
          id_token: idToken(claims, m === 'foreign-key' ? foreign.privateKey : key.privateKey),
        });
      });
      return;
    }
    res.statusCode = 404;
    res.end();
  });
  return state;
}

/** A gateway whose console signs in with `issuer`, configured in YAML as the README says (the secret from the env). */
function ssoGateway(issuer: string): Promise<TestGateway> {
  const yaml = `
server: { host: 127.0.0.1, port: 0, log_level: info, shutdown_grace_ms: 2000 }
store: { driver: memory }
providers: [{ name: mock, type: mock }]
models: ${JSON.stringify([MOCK_MODEL])}
plugins:
  - auth
  - console:
      sso:
        issuer: ${issuer}
        client_id: ${CLIENT_ID}
        client_secret: \${SSO_CLIENT_SECRET}
        scopes: [openid, email, groups]
        role_claim: groups
        roles: { gw-admins: admin, gw-operators: operator, gw-viewers: viewer }
  - routing
`;
  return startTestGateway(
    parseConfig(yaml, {
      env: { GATEWAY_ADMIN_KEY: ADMIN_KEY, SSO_CLIENT_SECRET: CLIENT_SECRET },
      baseDir: process.cwd(),
    }),
  );
}

describe('console single sign-on (OpenID Connect, a real provider on loopback, Chromium)', function () {
  this.timeout(120_000);
  const opServer = createServer();
  const badServer = createServer();
  let gw: TestGateway;
  let badGw: TestGateway;
  let bad: ReturnType<typeof startBadProvider>;
  let browser: Browser;

  before(async () => {
    const opIssuer = `http://127.0.0.1:${await listen(opServer)}`;
    const badIssuer = `http://127.0.0.1:${await listen(badServer)}`;
    gw = await ssoGateway(opIssuer);
    badGw = await ssoGateway(badIssuer);
    await startProvider(opServer, opIssuer, `${gw.url}/console/sso/callback`);
    bad = startBadProvider(badServer, badIssuer);
    browser = await launchChromium();
    console.log(`    screenshots: ${SHOTS}`);
  });
  after(async () => {
    await browser?.close();
    await gw?.stop();
    await badGw?.stop();
    opServer.close();
    badServer.close();
  });

  async function newContext(): Promise<BrowserContext> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    // Nothing off loopback (the provider's dev pages ask for a web font).
    await context.route(/^https?:\/\/(?!127\.0\.0\.1)/, (r) => r.abort());
    return context;
  }
  const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `sso-${name}.png`), fullPage: true });

  /** Through the sign-in page's SSO button to the provider's login form, as `user`. */
  async function ssoSignIn(page: Page, user: string): Promise<void> {
    await page.goto(`${gw.url}/console`);
    await page.click('#signin-sso');
    await page.waitForSelector('input[name="login"]');
    await page.fill('input[name="login"]', user);
    await page.fill('input[name="password"]', 'anything');
    await page.click('button[type="submit"]');
  }

  async function signedIn(user: string): Promise<{ context: BrowserContext; page: Page; csrf: string }> {
    const context = await newContext();
    const page = await context.newPage();
    await ssoSignIn(page, user);
    await page.waitForSelector('#page-overview .tiles');
    const me = (await (await context.request.get(`${gw.url}/console/api/me`)).json()) as { data: Rec };
    return { context, page, csrf: me.data.csrf_token as string };
  }

  it('maps the claim to the highest role; no mapping and no default is refused', () => {
    const cfg = { roles: ROLES as Record<string, 'admin' | 'operator' | 'viewer'> };
    expect(mapRole(cfg, ['gw-viewers', 'gw-operators'])).to.equal('operator');
    expect(mapRole(cfg, 'gw-admins')).to.equal('admin');
    expect(mapRole(cfg, ['staff'])).to.equal(undefined);
    expect(mapRole(cfg, undefined)).to.equal(undefined);
    expect(mapRole({ ...cfg, default_role: 'viewer' }, ['staff'])).to.equal('viewer');
  });

  it('admin: signs in with SSO, sees the SSO settings (never the secret) and the sessions, and may create a key', async () => {
    const { context, page, csrf } = await signedIn('alice');
    expect(await page.textContent('#who'))
      .to.include('alice@example.test')
      .and.include('admin');
    await shot(page, 'admin-overview');
    await page.click('#nav-sso');
    await page.waitForSelector('#sso-settings');
    const settings = (await page.textContent('#sso-settings')) ?? '';
    expect(settings).to.include(CLIENT_ID).and.include('gw-operators').and.not.include(CLIENT_SECRET);
    await shot(page, 'admin-sso-settings');
    await page.click('#nav-sessions');
    await page.waitForSelector('#sessions-table');
    expect(await page.textContent('#sessions-table'))
      .to.include('alice@example.test')
      .and.include('sso');
    await shot(page, 'admin-sessions');
    const acct = await context.request.post(`${gw.url}/console/api/accounts`, {
      data: { name: 'sso-made', credits: 1 },
      headers: { 'x-csrf-token': csrf },
    });
    expect(acct.status()).to.equal(201);
    const audit = await adminCall(gw, 'GET', '/v1/audit?limit=100');
    const made = (audit.body.data as Rec[]).find((r) => r.action === 'account.create');
    expect(made).to.include({ source: 'sso', actor: 'sso:alice', role: 'admin' });
    expect(JSON.stringify(audit.body)).to.not.contain(CLIENT_SECRET);
    await context.close();
  });

  it('operator: may create accounts and keys, but not see the SSO settings or the sessions (403 naming admin)', async () => {
    const { context, page, csrf } = await signedIn('olivia');
    expect(await page.textContent('#who')).to.include('operator');
    expect(await page.$('#nav-sso')).to.equal(null);
    expect(await page.$('#nav-sessions')).to.equal(null);
    await page.click('#nav-keys');
    await page.waitForSelector('#new-key-submit');
    await shot(page, 'operator-keys');
    const acct = await context.request.post(`${gw.url}/console/api/accounts`, {
      data: { name: 'by-operator', credits: 1 },
      headers: { 'x-csrf-token': csrf },
    });
    expect(acct.status()).to.equal(201);
    for (const path of ['sso', 'sessions']) {
      const r = await context.request.get(`${gw.url}/console/api/${path}`);
      expect(r.status()).to.equal(403);
      const e = ((await r.json()) as { error: { code: string; message: string } }).error;
      expect(e.code).to.equal('role_required');
      expect(e.message).to.include("'admin'").and.include("'operator'");
    }
    await context.close();
  });

  it('viewer: reads every account, cannot create a key (no form; 403 naming operator from the API)', async () => {
    const { context, page, csrf } = await signedIn('victor');
    expect(await page.textContent('#who')).to.include('viewer');
    await page.click('#nav-keys');
    await page.waitForSelector('#accounts-table');
    expect(await page.textContent('#accounts-table'))
      .to.include('sso-made')
      .and.include('by-operator');
    expect(await page.$('#new-key-submit')).to.equal(null);
    await shot(page, 'viewer-keys');
    const accounts = (await (await context.request.get(`${gw.url}/console/api/accounts`)).json()) as { data: Rec[] };
    const r = await context.request.post(`${gw.url}/console/api/keys`, {
      data: { account_id: accounts.data[0].id, name: 'nope' },
      headers: { 'x-csrf-token': csrf },
    });
    expect(r.status()).to.equal(403);
    const e = ((await r.json()) as { error: { code: string; message: string } }).error;
    expect(e.code).to.equal('role_required');
    expect(e.message).to.include("'operator'").and.include("'viewer'");
    // Sign-out ends the SSO session.
    await page.click('#signout');
    await page.waitForSelector('#signin-sso');
    expect((await context.request.get(`${gw.url}/console/api/me`)).status()).to.equal(401);
    await context.close();
  });

  it('a user whose groups map to no role (and no default) is refused with a clear page', async () => {
    const context = await newContext();
    const page = await context.newPage();
    const answer = page.waitForResponse((r) => r.url().startsWith(`${gw.url}/console/sso/callback`));
    await ssoSignIn(page, 'nobody');
    expect((await answer).status()).to.equal(403);
    await page.waitForSelector('#sso-refused');
    expect(await page.textContent('#sso-refused'))
      .to.include('No console role')
      .and.include("'groups'");
    await shot(page, 'no-role');
    expect((await context.request.get(`${gw.url}/console/api/me`)).status()).to.equal(401);
    await context.close();
  });

  /** Follow redirects outside the page (the context's cookies) until one points at the console's callback. */
  async function untilCallback(context: BrowserContext, url: string): Promise<string> {
    for (let i = 0; i < 10 && !url.includes('/console/sso/callback'); i++) {
      const r = await context.request.get(url, { maxRedirects: 0 });
      const location = r.headers().location;
      if (!location) throw new Error(`no redirect from ${url}: ${r.status()}`);
      url = new URL(location, url).href;
    }
    return url;
  }

  it('a wrong state, a replayed callback and a replayed code are refused', async () => {
    const context = await newContext();
    const page = await context.newPage();
    // Hold the provider's answer (the callback URL with a fresh code) instead of letting the browser follow it.
    let held = '';
    await page.route(/\/interaction\/[^/?]+$/, async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      const r = await route.fetch({ maxRedirects: 0 });
      held = await untilCallback(context, new URL(r.headers().location, route.request().url()).href);
      await route.fulfill({ status: 200, contentType: 'text/html', body: '<p id="held">held</p>' });
    });
    await ssoSignIn(page, 'alice');
    await page.waitForSelector('#held');
    const first = new URL(held);
    expect(first.searchParams.get('code')).to.be.a('string');

    // The fresh code with another state: refused before any exchange.
    const wrong = new URL(first);
    wrong.searchParams.set('state', 'not-the-state');
    expect((await page.goto(wrong.href))?.status()).to.equal(400);
    expect(await page.textContent('#sso-refused')).to.include('Sign-in refused');
    await shot(page, 'wrong-state');

    // The real callback once: signed in. The same callback again: its state was used, refused.
    await page.goto(first.href);
    await page.waitForSelector('#page-overview .tiles');
    expect((await page.goto(first.href))?.status()).to.equal(400);

    // The first (used) code with a new sign-in's state, so with that one's PKCE verifier: the provider refuses it.
    const second = new URL(await untilCallback(context, `${gw.url}/console/sso/login`));
    second.searchParams.set('code', first.searchParams.get('code') as string);
    expect((await page.goto(second.href))?.status()).to.equal(401);
    expect(await page.textContent('#sso-refused'))
      .to.include('not accepted')
      .and.include('invalid_grant');
    await shot(page, 'replayed-code');
    await context.close();
  });

  it('an ID token from another issuer, for another audience, expired, or signed with another key is refused', async () => {
    const context = await newContext();
    const page = await context.newPage();
    const attempt = async (mode: Mode) => {
      bad.mode = mode;
      const r = await page.goto(`${badGw.url}/console/sso/login`);
      return { status: r?.status(), text: (await page.textContent('body')) ?? '' };
    };
    for (const mode of ['other-issuer', 'other-audience', 'expired', 'foreign-key'] as const) {
      const r = await attempt(mode);
      expect(r.status, mode).to.equal(401);
      expect(r.text, mode).to.include('not accepted');
      expect((await context.request.get(`${badGw.url}/console/api/me`)).status(), mode).to.equal(401);
      if (mode === 'other-issuer') await shot(page, 'other-issuer');
    }
    // The same provider's well-formed token is accepted: the refusals above are for what each token got wrong.
    await attempt('good');
    await page.waitForSelector('#page-overview .tiles');
    expect(await page.textContent('#who'))
      .to.include('mallory')
      .and.include('admin');
    await context.close();
  });
});
