import { expect } from 'chai';
import { createHmac, randomBytes } from 'node:crypto';
import { startTestGateway, testConfig, type TestGateway } from '../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../helpers/accounts';
import { ecdsaPartner, reportLeak } from '../helpers/leak-reports';
import { s256 } from '../../plugins/oauth/pkce';

const SECRET = 'shared-secret-0123456789';

describe('hostile: OAuth consent and leaked-key reports (issue 15, item 9)', () => {
  const { pem, sign: ecdsa } = ecdsaPartner('p1');
  const verifier = randomBytes(48).toString('base64url');
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway(
      testConfig(
        {
          plugins: [
            'auth',
            {
              oauth: {
                callback_allowlist: ['https://app.example'],
                leaks: { public_keys: [{ key_identifier: 'p1', pem }], hmac_secret: SECRET, replay_window_s: 60 },
              },
            },
            'routing',
          ],
        },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
  });
  after(async () => gw.stop());

  const report = (body: string, headers: Record<string, string>) => reportLeak(gw, body, headers);
  const hmac = (body: string, ts: number) => ({
    'X-Signature-Timestamp': String(ts),
    'X-Signature-256': `sha256=${createHmac('sha256', SECRET).update(`${ts}.${body}`).digest('hex')}`,
  });

  it('a replayed report changes nothing, even after the owner re-enabled the key', async () => {
    const { key, hash } = await makeAccountKey(gw);
    const body = JSON.stringify([
      { token: key, type: 'gateway_api_key', url: 'https://github.com/x/y', source: 'content' },
    ]);
    const sig = ecdsa(body);
    expect((await report(body, sig)).status).to.equal(200);
    expect(await gw.services.store.keys.get(hash)).to.include({ disabled: true });
    expect((await adminCall(gw, 'PATCH', `/v1/keys/${hash}`, { disabled: false })).status).to.equal(200);
    const replay = await report(body, sig);
    expect(replay.status).to.equal(409);
    expect(((await replay.json()) as { error: { code: string } }).error.code).to.equal('report_replayed');
    expect(await gw.services.store.keys.get(hash)).to.include({ disabled: false });
  });

  it('a timestamped HMAC report works once, inside the window; an old or re-dated one is refused', async () => {
    const { key, hash } = await makeAccountKey(gw);
    const body = JSON.stringify([{ token: key, type: 'gateway_api_key', url: 'u', source: 'commit' }]);
    const now = Math.floor(Date.now() / 1000);
    const stale = await report(body, hmac(body, now - 3600));
    expect(stale.status).to.equal(401);
    expect(((await stale.json()) as { error: { code: string } }).error.code).to.equal('stale_report');
    // Changing the timestamp breaks the signature: it is signed with the body.
    const old = hmac(body, now - 3600);
    expect((await report(body, { ...old, 'X-Signature-Timestamp': String(now) })).status).to.equal(401);
    expect(await gw.services.store.keys.get(hash)).to.include({ disabled: false });
    const fresh = hmac(body, now);
    expect((await report(body, fresh)).status).to.equal(200);
    expect((await report(body, fresh)).status).to.equal(409);
  });

  describe('consent form', () => {
    const authQuery = (callback: string) =>
      new URLSearchParams({
        callback_url: callback,
        code_challenge: s256(verifier),
        code_challenge_method: 'S256',
      }).toString();
    async function page(): Promise<{ csrf: string; cookie: string }> {
      const res = await fetch(`${gw.url}/auth?${authQuery('https://app.example/cb')}`);
      expect(res.status).to.equal(200);
      const csrf = /name="csrf" value="([^"]+)"/.exec(await res.text())?.[1] ?? '';
      const setCookie = res.headers.get('set-cookie') ?? '';
      expect(setCookie)
        .to.match(/samesite=strict/i)
        .and.to.match(/httponly/i);
      return { csrf, cookie: setCookie.split(';')[0] };
    }
    const post = (form: Record<string, string>, headers: Record<string, string>) =>
      fetch(`${gw.url}/auth/consent`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body: new URLSearchParams(form).toString(),
      });
    const form = (key: string, extra: Record<string, string> = {}) => ({
      callback_url: 'https://app.example/cb',
      code_challenge: s256(verifier),
      code_challenge_method: 'S256',
      key,
      action: 'approve',
      ...extra,
    });

    it('refuses a post without the CSRF token, with another token, or from another origin; accepts the real one', async () => {
      const { key } = await makeAccountKey(gw);
      const p = await page();
      const codeOf = (r: Response) => r.json().then((b) => (b as { error: { code: string } }).error.code);
      const noToken = await post(form(key), { cookie: p.cookie, origin: gw.url });
      expect([noToken.status, await codeOf(noToken)]).to.deep.equal([403, 'csrf_failed']);
      const wrong = await post(form(key, { csrf: randomBytes(24).toString('base64url') }), {
        cookie: p.cookie,
        origin: gw.url,
      });
      expect([wrong.status, await codeOf(wrong)]).to.deep.equal([403, 'csrf_failed']);
      const noCookie = await post(form(key, { csrf: p.csrf }), { origin: gw.url });
      expect(noCookie.status).to.equal(403);
      const cross = await post(form(key, { csrf: p.csrf }), { cookie: p.cookie, origin: 'https://evil.example' });
      expect([cross.status, await codeOf(cross)]).to.deep.equal([403, 'cross_origin']);
      const noOrigin = await post(form(key, { csrf: p.csrf }), { cookie: p.cookie });
      expect(noOrigin.status).to.equal(403);
      const ok = await post(form(key, { csrf: p.csrf }), { cookie: p.cookie, origin: gw.url });
      expect(ok.status).to.equal(302);
      expect(ok.headers.get('location')).to.match(/^https:\/\/app\.example\/cb\?code=/);
    });

    it("holds the key's limit to the admin API's range: 1e308, negative and NaN are 400", async () => {
      const { key } = await makeAccountKey(gw);
      for (const limit of ['1e308', '9000001', '-1', 'NaN', 'Infinity']) {
        const p = await page();
        const res = await post(form(key, { csrf: p.csrf, limit }), { cookie: p.cookie, origin: gw.url });
        expect(res.status, limit).to.equal(400);
        const err = ((await res.json()) as { error: Record<string, string> }).error;
        expect(err.param).to.equal('limit');
      }
    });

    it('refuses localhost callbacks unless allow_localhost is set (off by default)', async () => {
      const res = await fetch(`${gw.url}/auth?${authQuery('http://localhost:9999/cb')}`);
      expect(res.status).to.equal(403);
    });
  });
});
