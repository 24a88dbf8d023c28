import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startSmtp } from '../../helpers/loopback';
import { startTestGateway, testConfig, postJson, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall } from '../../helpers/accounts';
import { ecdsaPartner, reportLeak } from '../../helpers/leak-reports';
import { generateKey } from '../../../src/auth/key-format';

const run = promisify(execFile);

describe('leaked keys: secret-scanning partner endpoint', () => {
  const { pem, sign: ecdsa } = ecdsaPartner('partner-key-1');
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  const mails = () => smtp.mails;
  let gw: TestGateway;
  before(async () => {
    smtp = await startSmtp();
    const port = smtp.port;
    gw = await startTestGateway(
      testConfig(
        {
          plugins: [
            'auth',
            {
              oauth: {
                leaks: {
                  public_keys: [{ key_identifier: 'partner-key-1', pem }],
                  hmac_secret: 'shared-secret-0123456789',
                  smtp: { host: '127.0.0.1', port, secure: false, from: 'gateway@example.test' },
                },
              },
            },
            'routing',
          ],
        },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
  });
  after(async () => {
    await gw.stop();
    await smtp.stop();
  });

  const report = (body: string, headers: Record<string, string>) => reportLeak(gw, body, headers);

  it('disables a reported live key, records where, e-mails the owner, answers true/false positives; the key is refused next', async () => {
    const a = await adminCall(gw, 'POST', '/v1/accounts', { name: 'Acme', email: 'owner@acme.test', credits: 1 });
    const k = await adminCall(gw, 'POST', '/v1/keys', { name: 'ci', account_id: (a.body.data as { id: string }).id });
    const key = k.body.key as string;
    const chat = () =>
      postJson(
        `${gw.url}/v1/chat/completions`,
        { model: 'mock/gpt-4o-mini', messages: [{ role: 'user', content: 'x' }] },
        { authorization: `Bearer ${key}` },
      );
    expect((await chat()).status).to.equal(200);
    const unknown = generateKey();
    const body = JSON.stringify([
      { token: key, type: 'gateway_api_key', url: 'https://github.com/acme/app/blob/abc/config.js', source: 'content' },
      { token: unknown, type: 'gateway_api_key', url: 'https://github.com/x/y', source: 'commit' },
    ]);
    const res = await report(body, ecdsa(body));
    expect(res.status).to.equal(200);
    expect(await res.json()).to.deep.equal([
      { token_raw: key, token_type: 'gateway_api_key', label: 'true_positive' },
      { token_raw: unknown, token_type: 'gateway_api_key', label: 'false_positive' },
    ]);
    const stored = await gw.services.store.keys.get((k.body.data as { hash: string }).hash);
    expect(stored).to.include({ disabled: true });
    expect(stored!.leakedAt).to.be.a('number');
    for (let i = 0; i < 50 && mails().length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(mails()).to.have.length(1);
    expect(mails()[0].to).to.equal('owner@acme.test');
    expect(mails()[0].body).to.include('https://github.com/acme/app/blob/abc/config.js');
    expect(mails()[0].body).to.not.include(key);
    await new Promise((r) => setTimeout(r, 2100)); // the auth cache bound
    expect((await chat()).status).to.equal(401);
  });

  it('a bad or missing signature is 401 and changes nothing; the HMAC alternative works', async () => {
    const a = await adminCall(gw, 'POST', '/v1/accounts', { name: 'B', email: 'b@b.test' });
    const k = await adminCall(gw, 'POST', '/v1/keys', { name: 'k', account_id: (a.body.data as { id: string }).id });
    const key = k.body.key as string;
    const body = JSON.stringify([{ token: key, type: 'gateway_api_key', url: 'u', source: 'content' }]);
    const forged = await report(body, ecdsa(body.replace('content', 'CONTENT')));
    expect(forged.status).to.equal(401);
    expect((await report(body, {})).status).to.equal(401);
    expect((await report(body, { 'X-Signature-256': 'sha256=00' })).status).to.equal(401);
    expect(await gw.services.store.keys.get((k.body.data as { hash: string }).hash)).to.include({ disabled: false });
    const ok = await report(body, {
      'X-Signature-256': `sha256=${createHmac('sha256', 'shared-secret-0123456789').update(body).digest('hex')}`,
    });
    expect(((await ok.json()) as Array<{ label: string }>)[0].label).to.equal('true_positive');
  });

  it('gateway keys scan finds our keys (checksum-confirmed) in files, never printing them', async function () {
    this.timeout(30000);
    const dir = mkdtempSync(join(tmpdir(), 'gw-scan-'));
    const key = generateKey();
    mkdirSync(join(dir, 'src'));
    writeFileSync(join(dir, 'src', 'config.js'), `const a = 1;\nconst key = "${key}";\n`);
    writeFileSync(join(dir, 'notes.txt'), `looks like one but is not: sk-gw-${'A'.repeat(36)}\n`);
    const r = await run(process.execPath, ['--require', 'tsx/cjs', 'src/cli.ts', 'keys', 'scan', dir]).catch(
      (e: { code: number; stdout: string }) => e,
    );
    expect((r as { code: number }).code).to.equal(1);
    expect((r as { stdout: string }).stdout).to.equal(`src/config.js:2: sk-gw-...${key.slice(-4)}\n`);
  });
});

describe('leaked-key reports and the failed-auth throttle (issue 43)', () => {
  it('forged reports count against their address: past the limit, 429 with Retry-After', async () => {
    const { pem } = ecdsaPartner('partner-key-2');
    const gw = await startTestGateway(
      testConfig(
        {
          plugins: [
            'auth',
            { limits: { auth_failures: { max: 3, window_ms: 60000 } } },
            { oauth: { leaks: { public_keys: [{ key_identifier: 'partner-key-2', pem }] } } },
            'routing',
          ],
        },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
    try {
      const body = JSON.stringify([{ token: 'sk-whatever', type: 'gateway_api_key', url: 'u', source: 'content' }]);
      const statuses = [];
      for (let i = 0; i < 4; i++)
        statuses.push((await reportLeak(gw, body, { 'X-Signature-256': 'sha256=00' })).status);
      expect(statuses).to.deep.equal([401, 401, 401, 429]);
      const last = await reportLeak(gw, body, { 'X-Signature-256': 'sha256=00' });
      expect(last.status).to.equal(429);
      expect(Number(last.headers.get('retry-after'))).to.be.greaterThan(0);
    } finally {
      await gw.stop();
    }
  });
});
