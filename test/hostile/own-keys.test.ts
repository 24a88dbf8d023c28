import { expect } from 'chai';
import { ADMIN_KEY, makeAccountKey } from '../helpers/accounts';
import { MOCK_MODEL, postJson, startTestGateway, testConfig, type TestGateway } from '../helpers/gateway';

/** Names every plain object answers through its prototype. */
const INHERITED = ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'];

describe('query and body values are matched against own keys only', function () {
  this.timeout(30000);
  let gw: TestGateway;
  let key: string;

  before(async () => {
    gw = await startTestGateway(
      testConfig(
        { plugins: ['auth', { console: { rollup_lag_ms: 0 } }, 'credit', 'routing'] },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
    ({ key } = await makeAccountKey(gw, { credits: 10 }));
    const r = await postJson(
      `${gw.url}/v1/chat/completions`,
      { model: MOCK_MODEL.id, messages: [{ role: 'user', content: 'hi' }] },
      { authorization: `Bearer ${key}` },
    );
    expect(r.status).to.equal(200);
    await r.text();
  });
  after(async () => gw?.stop());

  const get = (path: string, bearer = ADMIN_KEY) =>
    fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${bearer}` } });

  const expect400 = async (res: Response, param: string) => {
    const text = await res.text();
    expect(res.status, text).to.equal(400);
    expect(res.headers.get('content-type'), text).to.include('application/json');
    const e = (JSON.parse(text) as { error: { type: string; param: string } }).error;
    expect(e.type).to.equal('invalid_request_error');
    expect(e.param).to.equal(param);
    return text;
  };

  for (const name of INHERITED) {
    it(`/v1/activity?group_by=${name}: a 400 naming group_by, JSON and CSV (no CSV head written)`, async () => {
      for (const bearer of [ADMIN_KEY, key]) {
        await expect400(await get(`/v1/activity?group_by=${encodeURIComponent(name)}`, bearer), 'group_by');
        await expect400(await get(`/v1/activity?group_by=date,${encodeURIComponent(name)}`, bearer), 'group_by');
        const csv = await expect400(
          await get(`/v1/activity?format=csv&group_by=${encodeURIComponent(name)}`, bearer),
          'group_by',
        );
        expect(csv).to.not.match(/^date,/);
      }
    });
  }

  it('the same CSV with a real dimension still answers (head and rows), and /v1/rankings refuses inherited periods', async () => {
    const ok = await get('/v1/activity?format=csv&group_by=date,model');
    expect(ok.status).to.equal(200);
    expect(ok.headers.get('content-type')).to.include('text/csv');
    const lines = (await ok.text()).trim().split('\n');
    expect(lines[0]).to.match(/^date,model,/);
    expect(lines.length).to.be.at.least(2);
    for (const name of INHERITED)
      await expect400(await get(`/v1/rankings?period=${encodeURIComponent(name)}`), 'period');
    expect((await get('/v1/rankings?period=day')).status).to.equal(200);
  });

  it("the mock's structured answers take a schema's own keys only (format, required)", async () => {
    const r = await postJson(
      `${gw.url}/v1/chat/completions`,
      {
        model: MOCK_MODEL.id,
        messages: [{ role: 'user', content: 'hi' }],
        response_format: {
          type: 'json_schema',
          json_schema: {
            name: 'x',
            schema: {
              type: 'object',
              properties: { when: { type: 'string', format: 'constructor' } },
              required: ['when', '__proto__', 'toString'],
            },
          },
        },
      },
      { authorization: `Bearer ${key}` },
    );
    const text = await r.text();
    expect(r.status, text).to.equal(200);
    const content = (JSON.parse(text) as { choices: Array<{ message: { content: string } }> }).choices[0].message
      .content;
    const value = JSON.parse(content) as Record<string, unknown>;
    expect(value.when).to.equal('mock when');
    expect(Object.keys(value)).to.deep.equal(['when', '__proto__', 'toString']);
  });
});
