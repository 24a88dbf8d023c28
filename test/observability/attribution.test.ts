import { expect } from 'chai';
import { startTestGateway, postJson, type TestGateway } from '../helpers/gateway';
import { adminCall, makeAccountKey } from '../helpers/accounts';
import { creditConfig, MODEL } from '../helpers/credit';

describe('attribution and rankings', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway(creditConfig());
  });
  after(() => gw.stop());

  it('records HTTP-Referer and X-Title (or X-OpenRouter-Title) per generation and ranks apps by tokens, per model', async () => {
    const { key } = await makeAccountKey(gw, { credits: 10 });
    const send = (headers: Record<string, string>, content: string) =>
      postJson(
        `${gw.url}/v1/chat/completions`,
        { model: MODEL, messages: [{ role: 'user', content }] },
        { authorization: `Bearer ${key}`, ...headers },
      );
    for (let i = 0; i < 3; i++)
      await send(
        { 'HTTP-Referer': 'https://big.app', 'X-Title': 'Big App' },
        'a much longer prompt with many many words in it',
      );
    await send({ 'HTTP-Referer': 'https://small.app', 'X-OpenRouter-Title': 'Small App' }, 'hi');
    await send({}, 'anonymous caller');
    expect((await adminCall(gw, 'GET', '/v1/rankings?period=day', undefined, key)).status).to.equal(403);
    expect((await adminCall(gw, 'GET', '/v1/rankings?period=year')).status).to.equal(400);
    const r = await adminCall(gw, 'GET', '/v1/rankings?period=week');
    const data = r.body.data as Array<{
      referer: string | null;
      title: string | null;
      requests: number;
      tokens: number;
      models: Array<{ model: string; requests: number }>;
    }>;
    expect(data.map((d) => d.title)).to.deep.equal(['Big App', null, 'Small App']);
    expect(data[0]).to.include({ referer: 'https://big.app', requests: 3 });
    expect(data[0].models).to.deep.equal([{ model: MODEL, requests: 3, tokens: data[0].tokens }]);
    expect(data[2]).to.include({ referer: 'https://small.app', requests: 1 });
  });

  it('stores metadata and user with the generation record and filters on them', async () => {
    const { key } = await makeAccountKey(gw, { credits: 10 });
    const send = (user: string, run: string) =>
      postJson(
        `${gw.url}/v1/chat/completions`,
        { model: MODEL, user, metadata: { run, team: 'red' }, messages: [{ role: 'user', content: 'x' }] },
        { authorization: `Bearer ${key}` },
      );
    await send('alice', '1');
    await send('bob', '1');
    await send('alice', '2');
    const byUser = await adminCall(gw, 'GET', '/v1/generations?user=alice', undefined, key);
    expect((byUser.body.data as Array<{ user: string }>).map((g) => g.user)).to.deep.equal(['alice', 'alice']);
    const byMeta = await adminCall(gw, 'GET', '/v1/generations?metadata.run=1', undefined, key);
    const rows = byMeta.body.data as Array<{ user: string; metadata: Record<string, string> }>;
    expect(rows.map((g) => g.user).sort()).to.deep.equal(['alice', 'bob']);
    expect(rows[0].metadata).to.deep.equal({ run: '1', team: 'red' });
    const other = await makeAccountKey(gw);
    expect((await adminCall(gw, 'GET', '/v1/generations?user=alice', undefined, other.key)).body.data).to.deep.equal(
      [],
    );
  });
});
