import { expect } from 'chai';
import { oauthMiddleware } from '../../../plugins/oauth/middleware';
import type { GatewayContext } from '../../../src/plugin';
import { MOCK_MODEL, postJson, sseData, startTestGateway, testConfig, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, makeAccountKey } from '../../helpers/accounts';

/** The oauth plugin has no work on the chat chain: its step passes the request on, untouched and unwrapped. */
describe('oauth middleware', () => {
  it('passes on the very promise next returns, calling next once', async () => {
    let calls = 0;
    const done = Promise.resolve();
    const step = oauthMiddleware();
    const out = step({} as GatewayContext, () => {
      calls++;
      return done;
    });
    expect(out).to.equal(done);
    expect(calls).to.equal(1);
    await out;
  });

  describe('on a chain with auth', () => {
    let gw: TestGateway;
    let key: string;
    before(async () => {
      gw = await startTestGateway(
        testConfig({ plugins: ['auth', 'oauth', 'routing'] }, { GATEWAY_ADMIN_KEY: ADMIN_KEY }),
      );
      ({ key } = await makeAccountKey(gw, { credits: 5 }));
    });
    after(() => gw?.stop());

    it('a plain and a streamed chat request answer through it; a missing key is still auth 401', async () => {
      const ask = { model: MOCK_MODEL.id, messages: [{ role: 'user', content: 'hello' }] };
      const auth = { authorization: `Bearer ${key}` };
      const plain = await postJson(`${gw.url}/v1/chat/completions`, ask, auth);
      expect(plain.status).to.equal(200);
      const body = (await plain.json()) as { choices: Array<{ message: { content: string } }> };
      expect(body.choices[0].message.content).to.be.a('string').and.not.equal('');
      const streamed = await postJson(`${gw.url}/v1/chat/completions`, { ...ask, stream: true }, auth);
      expect(streamed.status).to.equal(200);
      expect(sseData(await streamed.text()).at(-1)).to.equal('[DONE]');
      const anonymous = await postJson(`${gw.url}/v1/chat/completions`, ask);
      expect(anonymous.status).to.equal(401);
    });
  });
});
