import { expect } from 'chai';
import { postJson, startTestGateway, type TestGateway } from '../../helpers/gateway';
import { makeAccountKey } from '../../helpers/accounts';
import { creditConfig, MODEL } from '../../helpers/credit';
import { MockUpstream, sendJson } from '../../helpers/mock-upstream';
import { creditOf } from '../../helpers/store';

/**
 * The credit plugin's step when a request produces nothing to bill: it failed inside the chain (plain or streamed),
 * or the chain left no result. Each settles its reservation to nothing, with a generation record of status `error`
 * naming why; the account pays nothing and keeps no reservation open.
 */
describe('credit middleware, a request with nothing to bill', () => {
  const ask = (model: string, stream = false) => ({
    model,
    stream,
    max_tokens: 5,
    messages: [{ role: 'user', content: 'hello' }],
  });

  async function recordOf(gw: TestGateway, accountId: string) {
    const store = gw.services.store;
    for (let i = 0; i < 100 && (await creditOf(store).openReservations(accountId)) > 0; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(await creditOf(store).openReservations(accountId)).to.equal(0);
    const account = await store.accounts.get(accountId);
    expect(account).to.include({ usage: 0, reserved: 0 });
    const [g] = await store.generations.list({ accountId, limit: 1 });
    return g;
  }

  describe('that fails upstream', () => {
    let up: MockUpstream;
    let gw: TestGateway;
    before(async () => {
      up = await new MockUpstream().start();
      up.handler = (_req, res) => sendJson(res, 400, { error: { message: 'no', type: 'invalid_request_error' } });
      gw = await startTestGateway(
        creditConfig({
          providers: [{ name: 'up', type: 'openai', api_base: `${up.url}/v1` }],
          models: [
            {
              id: 'up/failing',
              owned_by: 'up',
              pricing: { prompt: 0.00001, completion: 0.00003 },
              deployments: [{ provider: 'up', model: 'failing' }],
            },
          ],
        }),
      );
    });
    after(async () => {
      await gw?.stop();
      await up?.stop();
    });

    for (const stream of [false, true]) {
      it(`records a ${stream ? 'streamed' : 'plain'} request's failure with its code, and charges nothing`, async () => {
        const { key, accountId } = await makeAccountKey(gw, { credits: 1 });
        const res = await postJson(`${gw.url}/v1/chat/completions`, ask('up/failing', stream), {
          authorization: `Bearer ${key}`,
        });
        expect(res.status).to.equal(400);
        const { error } = (await res.json()) as { error: { code: string } };
        const g = await recordOf(gw, accountId);
        expect(g).to.include({
          model: 'up/failing',
          cost: 0,
          promptTokens: 0,
          completionTokens: 0,
          finishReason: null,
          streamed: stream,
          cancelled: false,
          status: 'error',
          errorCode: error.code,
          ttftMs: null,
        });
      });
    }
  });

  describe('that the chain leaves without a result', () => {
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway(
        creditConfig({ plugins: ['auth', 'credit', { use: './test/plugins/credit/no-answer' }] }),
      );
    });
    after(() => gw?.stop());

    it("is a 500 to the client and a 'no_result' record", async () => {
      const { key, accountId } = await makeAccountKey(gw, { credits: 1 });
      const res = await postJson(`${gw.url}/v1/chat/completions`, ask(MODEL), { authorization: `Bearer ${key}` });
      expect(res.status).to.equal(500);
      const g = await recordOf(gw, accountId);
      expect(g).to.include({
        model: MODEL,
        cost: 0,
        streamed: false,
        cancelled: false,
        status: 'error',
        errorCode: 'no_result',
      });
    });
  });
});
