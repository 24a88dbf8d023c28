import { expect } from 'chai';
import { createHmac } from 'node:crypto';
import { startSmtp } from '../../helpers/loopback';
import { startTestGateway, testConfig, postJson, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall } from '../../helpers/accounts';
import { MockUpstream, sendJson } from '../../helpers/mock-upstream';
import { exactRequest } from '../../helpers/credit';
import { fromNano } from '../../../src/store/money';

const SECRET = 'webhook-secret-0123456789';

describe("budget notices: e-mail (the leak notices' SMTP) and signed webhooks, once per threshold", function () {
  this.timeout(30000);
  const hooks = new MockUpstream();
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  const mails = () => smtp.mails;
  let gw: TestGateway;
  // Credit reserves its bound (above the real cost) and settles to the cost: with a limit of
  // bound + 9 x cost, exactly 10 sequential requests are admitted and the key reaches `top` %.
  const { body, cost, reserve } = exactRequest();
  const limit = reserve + 9 * cost;
  const top = Math.floor((100 * 10 * cost) / limit);
  const thresholds = [Math.floor(top / 2), Math.floor((top * 4) / 5), top];

  before(async () => {
    smtp = await startSmtp();
    await hooks.start();
    // The first delivery fails: the notice must come again, after a backoff.
    hooks.enqueue((_r, res) => sendJson(res, 503, { error: 'busy' }));
    hooks.handler = (_r, res) => sendJson(res, 204, {});
    const port = smtp.port;
    gw = await startTestGateway(
      testConfig(
        {
          plugins: [
            'auth',
            { oauth: { leaks: { smtp: { host: '127.0.0.1', port, secure: false, from: 'gateway@example.test' } } } },
            {
              limits: {
                alerts: {
                  key_limit_percent: thresholds,
                  account_balance_below: [0.99999],
                  webhook: { url: `${hooks.url}/hooks/budget`, secret: SECRET, backoff_ms: 50 },
                },
              },
            },
            'credit',
            'routing',
          ],
        },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
  });
  after(async () => {
    await gw.stop();
    await hooks.stop();
    await smtp.stop();
  });

  const delivered = () => hooks.requests.filter((_r, i) => i > 0);

  it("requests that use up a key's limit send exactly one e-mail and one valid signed webhook per threshold crossed", async () => {
    const a = await adminCall(gw, 'POST', '/v1/accounts', { name: 'Acme', email: 'owner@acme.test', credits: 1 });
    const accountId = (a.body.data as { id: string }).id;
    const k = await adminCall(gw, 'POST', '/v1/keys', { name: 'ci', account_id: accountId, limit: fromNano(limit) });
    const key = k.body.key as string;
    const answers: Response[] = [];
    for (let i = 0; i < 16; i++)
      answers.push(await postJson(`${gw.url}/v1/chat/completions`, body, { authorization: `Bearer ${key}` }));
    expect(answers.filter((r) => r.status === 200)).to.have.length(10);
    expect(answers.filter((r) => r.status === 402)).to.have.length(6);

    const end = Date.now() + 10000;
    while ((mails().length < 4 || delivered().length < 4) && Date.now() < end)
      await new Promise((r) => setTimeout(r, 50));
    // More requests in the same window send nothing new.
    await postJson(`${gw.url}/v1/chat/completions`, body, { authorization: `Bearer ${key}` });
    await new Promise((r) => setTimeout(r, 500));

    expect(mails()).to.have.length(4);
    for (const m of mails()) expect(m.to).to.equal('owner@acme.test');
    const subjects = mails()
      .map((m) => /^Subject: (.*)$/m.exec(m.body)?.[1] ?? '')
      .sort();
    for (const t of thresholds) expect(subjects.filter((s) => s.includes(`${t}%`))).to.have.length(1);
    expect(subjects.filter((s) => s.includes('balance is below'))).to.have.length(1);
    expect(mails().some((m) => m.body.includes(key))).to.equal(false);

    expect(hooks.requests[0].path).to.equal('/hooks/budget');
    const events = delivered().map((r) => {
      const sig = String(r.headers['x-gateway-signature']);
      const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(sig);
      expect(m, sig).to.not.equal(null);
      expect(Math.abs(Number(m![1]) - Date.now() / 1000)).to.be.below(60);
      expect(m![2]).to.equal(createHmac('sha256', SECRET).update(`${m![1]}.${r.body}`).digest('hex'));
      return r.json as { type: string; threshold_percent?: number; below?: number };
    });
    expect(events).to.have.length(4);
    expect(
      events
        .filter((e) => e.type === 'budget.key_limit')
        .map((e) => e.threshold_percent)
        .sort((x, y) => x! - y!),
    ).to.deep.equal(thresholds);
    expect(events.filter((e) => e.type === 'budget.account_balance').map((e) => e.below)).to.deep.equal([0.99999]);
    expect(hooks.requests.every((r) => !r.body.includes(key))).to.equal(true);
  });
});

describe("budget notices: a key's and an account's own thresholds (no configured ones)", function () {
  this.timeout(30000);
  const hooks = new MockUpstream();
  let gw: TestGateway;
  const { body, cost, reserve } = exactRequest();
  // Five sequential requests fit the limit: the key reaches `top` % of it.
  const limit = reserve + 4 * cost;
  const top = Math.floor((100 * 5 * cost) / limit);

  before(async () => {
    await hooks.start();
    hooks.handler = (_r, res) => sendJson(res, 204, {});
    gw = await startTestGateway(
      testConfig(
        {
          plugins: [
            'auth',
            // No thresholds in gateway.yaml: only a key's or an account's own may send a notice.
            { limits: { alerts: { webhook: { url: `${hooks.url}/hooks/budget`, secret: SECRET, backoff_ms: 50 } } } },
            'credit',
            'routing',
          ],
        },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
  });
  after(async () => {
    await gw.stop();
    await hooks.stop();
  });

  const events = () =>
    hooks.requests.map(
      (r) => r.json as { type: string; key?: { hash: string }; threshold_percent?: number; below?: number },
    );

  it("a key's own percent and its account's balance threshold each send one notice; a key without any sends none", async () => {
    const make = async (name: string) => {
      const a = await adminCall(gw, 'POST', '/v1/accounts', { name, credits: 1 });
      const accountId = (a.body.data as { id: string }).id;
      const k = await adminCall(gw, 'POST', '/v1/keys', { name, account_id: accountId, limit: fromNano(limit) });
      return { accountId, key: k.body.key as string, hash: (k.body.data as { hash: string }).hash };
    };
    const watched = await make('own-thresholds');
    const quiet = await make('no-thresholds');
    const set = await adminCall(gw, 'PUT', `/v1/keys/${watched.hash}/limits`, {
      budget_alerts: { key_limit_percent: [top] },
    });
    expect(set.status, JSON.stringify(set.body)).to.equal(200);
    const acct = await adminCall(gw, 'PUT', `/v1/accounts/${watched.accountId}/limits`, {
      budget_alerts: { account_balance_below: [0.99999] },
    });
    expect(acct.status).to.equal(200);
    for (const k of [watched, quiet])
      for (let i = 0; i < 5; i++) {
        const r = await postJson(`${gw.url}/v1/chat/completions`, body, { authorization: `Bearer ${k.key}` });
        expect(r.status).to.equal(200);
      }
    const end = Date.now() + 10000;
    while (events().length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 600));
    const got = events();
    expect(
      got.filter((e) => e.type === 'budget.key_limit').map((e) => [e.key?.hash, e.threshold_percent]),
    ).to.deep.equal([[watched.hash, top]]);
    expect(got.filter((e) => e.type === 'budget.account_balance').map((e) => e.below)).to.deep.equal([0.99999]);
    expect(got).to.have.length(2);
  });
});
