import { expect } from 'chai';
import { postJson, startTestGateway, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../../helpers/accounts';
import type { MockUpstream } from '../../helpers/mock-upstream';
import { within } from '../../helpers/poll';
import { echoUpstream, guardConfig, policy } from './helpers';

const EMAIL = 'carol@example.net';
const TOKEN = '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';

/**
 * The generation record keeps what guardrails did (rule, side, action, count; never the value); key and account
 * policies come from the admin API (operator role, audited).
 */
describe('guardrails: generation records and key/account policies', function () {
  this.timeout(60000);
  let upstream: MockUpstream;
  let gw: TestGateway;

  before(async () => {
    upstream = await echoUpstream(4).start();
    const guard = {
      guardrails: {
        policies: {
          pii: policy([['email', 'both', 'redact']]),
          strict: policy([['secrets', 'input', 'block']]),
        },
        default_policy: 'pii',
      },
    };
    gw = await startTestGateway(
      guardConfig(upstream, ['auth', 'credit', guard, 'storage', 'routing'], {}, { GATEWAY_ADMIN_KEY: ADMIN_KEY }),
    );
  });
  after(async () => {
    await gw?.stop();
    await upstream?.stop();
  });

  const ask = (key: string, text: string, stream = false) =>
    postJson(
      `${gw.url}/v1/chat/completions`,
      { model: 'up/m', stream, messages: [{ role: 'user', content: text }] },
      { authorization: `Bearer ${key}` },
    );
  const record = async (id: string) => {
    let g: Awaited<ReturnType<typeof gw.services.store.generations.get>>;
    await within(5000, async () => (g = await gw.services.store.generations.get(id)) !== undefined);
    return g!;
  };

  it('a redaction is in the record, plain and streamed, without the value', async () => {
    const { key } = await makeAccountKey(gw);
    const res = await ask(key, `mail ${EMAIL} and ${EMAIL}`);
    expect(res.status).to.equal(200);
    const id = ((await res.json()) as { id: string }).id;
    const g = await record(id);
    expect(JSON.parse(g.guardrails!)).to.deep.equal([{ rule: 'email', side: 'input', action: 'redact', count: 2 }]);
    expect(JSON.stringify(g)).not.to.include(EMAIL);
    const streamed = await (await ask(key, `mail ${EMAIL}`, true)).text();
    const sid = (/"id":"(chatcmpl-[^"]+)"/.exec(streamed) ?? [])[1];
    expect(JSON.parse((await record(sid)).guardrails!)).to.deep.equal([
      { rule: 'email', side: 'input', action: 'redact', count: 1 },
    ]);
  });

  it('a key policy set by the admin API applies to that key alone, is audited, and is read back', async () => {
    const a = await makeAccountKey(gw);
    const b = await makeAccountKey(gw);
    const put = await adminCall(gw, 'PUT', `/v1/keys/${a.hash}/guardrails`, { policy: 'strict' });
    expect(put.status).to.equal(200);
    expect((await adminCall(gw, 'GET', `/v1/keys/${a.hash}/guardrails`)).body).to.deep.equal({
      data: { policy: 'strict' },
    });
    const blocked = await ask(a.key, `token ${TOKEN}`);
    expect(blocked.status).to.equal(400);
    const blockedId = blocked.headers.get('x-request-id');
    expect(blockedId).to.be.a('string');
    expect((await ask(b.key, `token ${TOKEN}`)).status).to.equal(200);
    const audit = await adminCall(gw, 'GET', '/v1/audit?action=guardrails.set');
    expect(JSON.stringify(audit.body)).to.include(`key:${a.hash}`).and.include('strict');
    // The key's and the default policy add up: the key still gets its e-mail redacted.
    const res = await ask(a.key, `mail ${EMAIL}`);
    expect(upstream.requests.at(-1)!.body).to.include('[EMAIL_1]').and.not.include(EMAIL);
    expect(res.status).to.equal(200);
  });

  it('an account policy applies to every key of the account; clearing it lifts it', async () => {
    const a = await makeAccountKey(gw);
    expect(
      (await adminCall(gw, 'PUT', `/v1/accounts/${a.accountId}/guardrails`, { policy: 'strict' })).status,
    ).to.equal(200);
    expect((await ask(a.key, `token ${TOKEN}`)).status).to.equal(400);
    expect((await adminCall(gw, 'PUT', `/v1/accounts/${a.accountId}/guardrails`, { policy: null })).status).to.equal(
      200,
    );
    expect((await ask(a.key, `token ${TOKEN}`)).status).to.equal(200);
  });

  it('refuses an unknown policy (400), an unknown key (404), and an account key (403)', async () => {
    const a = await makeAccountKey(gw);
    expect((await adminCall(gw, 'PUT', `/v1/keys/${a.hash}/guardrails`, { policy: 'nope' })).status).to.equal(400);
    expect((await adminCall(gw, 'PUT', `/v1/keys/${'0'.repeat(64)}/guardrails`, { policy: 'strict' })).status).to.equal(
      404,
    );
    const self = await adminCall(gw, 'PUT', `/v1/keys/${a.hash}/guardrails`, { policy: null }, a.key);
    expect(self.status).to.equal(403);
  });

  it('a blocked request has a record too: its error code and the block', async () => {
    const a = await makeAccountKey(gw);
    await adminCall(gw, 'PUT', `/v1/keys/${a.hash}/guardrails`, { policy: 'strict' });
    const before = await gw.services.store.generations.list({ accountId: a.accountId, limit: 10 });
    expect((await ask(a.key, `token ${TOKEN}`)).status).to.equal(400);
    let rows = before;
    await within(5000, async () => {
      rows = await gw.services.store.generations.list({ accountId: a.accountId, limit: 10 });
      return rows.length > before.length;
    });
    const g = rows[0];
    expect(g.errorCode).to.equal('guardrail_blocked');
    expect(JSON.parse(g.guardrails!)).to.deep.equal([{ rule: 'secrets', side: 'input', action: 'block', count: 1 }]);
    expect(JSON.stringify(g)).not.to.include(TOKEN);
  });
});
