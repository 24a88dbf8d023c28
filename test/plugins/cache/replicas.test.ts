import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../../helpers/accounts';
import { freshPostgresUrl, POSTGRES_URL } from '../../helpers/postgres';
import { startGatewayProcess, type GatewayProcess } from '../../helpers/process';
import type { MockUpstream } from '../../helpers/mock-upstream';
import { sseData } from '../../helpers/gateway';
import { CACHE_DEFAULTS, cacheModels, chat, providersOf, scriptedUpstream } from './helpers';

const REDIS_URL = process.env.GATEWAY_TEST_REDIS_URL || undefined;
const ASK = { model: 'up/m', temperature: 0, messages: [{ role: 'user', content: 'shared?' }] };

for (const backend of ['store', 'redis'] as const) {
  describe(`cache plugin: two gateway processes on PostgreSQL share entries (backend: ${backend})`, function () {
    this.timeout(120000);
    const procs: GatewayProcess[] = [];
    let up: MockUpstream;

    before(async function () {
      if (!POSTGRES_URL || (backend === 'redis' && !REDIS_URL)) {
        console.warn(
          '    ! GATEWAY_TEST_POSTGRES_URL or GATEWAY_TEST_REDIS_URL is not set; the replica test did not run',
        );
        this.skip();
      }
      up = await scriptedUpstream().start();
      const cache = {
        ...CACHE_DEFAULTS,
        backend,
        settings_refresh_ms: 200,
        ...(backend === 'redis'
          ? { redis: { url: REDIS_URL, prefix: `gw-test-cache-${randomBytes(6).toString('hex')}:` } }
          : {}),
      };
      const cfg = {
        server: { host: '127.0.0.1', port: 0, log_level: 'info' },
        store: { driver: 'postgres', url: await freshPostgresUrl(), pool_size: 5 },
        providers: providersOf(up),
        models: cacheModels(),
        plugins: ['auth', 'limits', 'credit', 'storage', { cache }, 'routing'],
      };
      for (let i = 0; i < 2; i++) procs.push(await startGatewayProcess(cfg, { GATEWAY_ADMIN_KEY: ADMIN_KEY }));
    });
    after(async () => {
      await Promise.all(procs.map((p) => p.stop()));
      await up?.stop();
    });

    it('an answer stored by one replica is a hit on the other, plain and streamed', async () => {
      const [a, b] = procs;
      const { key } = await makeAccountKey(a, { credits: 10 });
      const first = await chat(a, key, ASK);
      const second = await chat(b, key, ASK);
      expect([first.cache, second.cache]).to.deep.equal(['miss', 'hit']);
      expect(second.json.choices).to.deep.equal(first.json.choices);
      const s = await chat(a, key, { ...ASK, stream: true });
      expect(s.cache).to.equal('hit');
      expect(sseData(s.text).pop()).to.equal('[DONE]');
      expect(up.requests.length).to.equal(1);
    });

    it('a purge on one replica is seen by the other; an opt-out reaches the other within the refresh', async () => {
      const [a, b] = procs;
      const k = await makeAccountKey(a, { credits: 10 });
      const ask = { ...ASK, messages: [{ role: 'user', content: 'purge across' }] };
      await chat(a, k.key, ask);
      expect((await chat(b, k.key, ask)).cache).to.equal('hit');
      const purged = await adminCall(a, 'POST', '/v1/cache/purge', { account_id: k.accountId });
      expect(purged.body).to.deep.equal({ data: { deleted: 1 } });
      expect((await chat(b, k.key, ask)).cache).to.equal('miss');
      await adminCall(a, 'PUT', `/v1/keys/${k.hash}/cache`, { enabled: false });
      await new Promise((r) => setTimeout(r, 600));
      expect((await chat(b, k.key, ask)).cache).to.equal('bypass');
    });
  });
}
