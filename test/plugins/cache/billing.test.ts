import { expect } from 'chai';
import type { TestGateway } from '../../helpers/gateway';
import { adminCall, makeAccountKey } from '../../helpers/accounts';
import type { MockUpstream } from '../../helpers/mock-upstream';
import { sseData } from '../../helpers/gateway';
import { cacheGateway, chat, scriptedUpstream } from './helpers';

const ASK = { model: 'up/m', temperature: 0, messages: [{ role: 'user', content: 'bill me' }] };
/** The scripted upstream's usage (19 prompt, 10 completion) at 1000 and 3000 nano-credits a token. */
const FULL_NANO = 19 * 1000 + 10 * 3000;

/** The account's usage so far, in nano-credits. */
async function usedNano(gw: TestGateway, accountId: string): Promise<number> {
  const a = await adminCall(gw, 'GET', `/v1/accounts/${accountId}`);
  return Math.round(((a.body.data as { usage: number }).usage ?? 0) * 1e9);
}

for (const [charge, hitNano] of [
  ['free', 0],
  ['full', FULL_NANO],
  // Each per-token price times 0.25, rounded to the nano-credit: 250 and 750.
  [0.25, 19 * 250 + 10 * 750],
  // 1000 x 0.3333 = 333.3 -> 333; 3000 x 0.3333 = 999.9 -> 1000.
  [0.3333, 19 * 333 + 10 * 1000],
] as const) {
  describe(`cache plugin: a hit billed ${String(charge)}`, function () {
    this.timeout(30000);
    let up: MockUpstream;
    let gw: TestGateway;

    before(async () => {
      up = await scriptedUpstream().start();
      gw = await cacheGateway(up, { charge });
    });
    after(async () => {
      await gw?.stop();
      await up?.stop();
    });

    it('to the nano-credit, in usage.cost and on the account (plain and streamed)', async () => {
      const { key, accountId } = await makeAccountKey(gw, { credits: 10 });
      const miss = await chat(gw, key, ASK);
      expect(Math.round((miss.json.usage as { cost: number }).cost * 1e9)).to.equal(FULL_NANO);
      expect(await usedNano(gw, accountId)).to.equal(FULL_NANO);
      const hit = await chat(gw, key, ASK);
      expect(hit.cache).to.equal('hit');
      expect(Math.round((hit.json.usage as { cost: number }).cost * 1e9)).to.equal(hitNano);
      expect(await usedNano(gw, accountId)).to.equal(FULL_NANO + hitNano);
      const s = await chat(gw, key, { ...ASK, stream: true, stream_options: { include_usage: true } });
      expect(s.cache).to.equal('hit');
      const last = JSON.parse(sseData(s.text).slice(-2)[0]) as { usage: { cost: number } };
      expect(Math.round(last.usage.cost * 1e9)).to.equal(hitNano);
      expect(await usedNano(gw, accountId)).to.equal(FULL_NANO + 2 * hitNano);
      expect(up.requests.length).to.equal(1);
    });
  });
}
