import { randomBytes } from 'node:crypto';
import { expect } from 'chai';
import type { TestGateway } from '../../helpers/gateway';
import { makeAccountKey } from '../../helpers/accounts';
import type { MockUpstream } from '../../helpers/mock-upstream';
import { cacheGateway, chat, scriptedUpstream } from './helpers';

const ask = (content: string) => ({ model: 'up/m', temperature: 0, messages: [{ role: 'user', content }] });

const REDIS_URL = process.env.GATEWAY_TEST_REDIS_URL || undefined;

for (const [counted, store] of [
  [false, 'memory'],
  [true, 'memory'],
  [false, 'redis'],
] as const) {
  describe(`cache plugin: hits and rate limits (count_rate_limits: ${String(counted)}, limits in ${store})`, function () {
    this.timeout(30000);
    let up: MockUpstream;
    let gw: TestGateway;

    before(async function () {
      if (store === 'redis' && !REDIS_URL) {
        console.warn('    ! GATEWAY_TEST_REDIS_URL is not set; a hit released in Redis did not run');
        this.skip();
      }
      up = await scriptedUpstream().start();
      const limits = {
        key: { rpm: 2, tpm: 0, concurrency: 4 },
        ...(store === 'redis'
          ? { store, redis: { url: REDIS_URL, prefix: `gw-test-cache-lim-${randomBytes(6).toString('hex')}:` } }
          : {}),
      };
      gw = await cacheGateway(up, { count_rate_limits: counted }, { limits });
    });
    after(async () => {
      await gw?.stop();
      await up?.stop();
    });

    it(counted ? 'a hit counts as a request' : 'a hit leaves the window as if never admitted', async () => {
      const { key } = await makeAccountKey(gw);
      const statuses: Array<[number, string | null]> = [];
      const send = async (content: string) => {
        const r = await chat(gw, key, ask(content));
        statuses.push([r.status, r.cache]);
      };
      await send('a'); // miss: 1 request in the window
      await send('a'); // hit
      await send('a'); // hit
      await send('b'); // miss
      await send('c'); // miss
      expect(statuses).to.deep.equal(
        counted
          ? [
              [200, 'miss'],
              [200, 'hit'],
              [429, null],
              [429, null],
              [429, null],
            ]
          : [
              [200, 'miss'],
              [200, 'hit'],
              [200, 'hit'],
              [200, 'miss'],
              [429, null],
            ],
      );
    });
  });
}
