import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import type { TestGateway } from '../../helpers/gateway';
import { adminCall, makeAccountKey } from '../../helpers/accounts';
import type { MockUpstream } from '../../helpers/mock-upstream';
import { cacheGateway, chat, scriptedUpstream } from './helpers';

const REDIS_URL = process.env.GATEWAY_TEST_REDIS_URL || undefined;
const ASK = { model: 'up/m', temperature: 0, messages: [{ role: 'user', content: 'backend' }] };

describe('cache plugin: backends and limits', function () {
  this.timeout(30000);
  let up: MockUpstream;
  const gws: TestGateway[] = [];

  before(async () => {
    up = await scriptedUpstream().start();
  });
  after(async () => {
    await Promise.all(gws.map((g) => g.stop()));
    await up?.stop();
  });

  it('Redis: the same request twice is one upstream call, plain then streamed', async function () {
    if (!REDIS_URL) {
      console.warn('    ! GATEWAY_TEST_REDIS_URL is not set; the Redis backend test did not run');
      this.skip();
    }
    const prefix = `gw-test-cache-${randomBytes(6).toString('hex')}:`;
    const gw = await cacheGateway(up, { backend: 'redis', redis: { url: REDIS_URL, prefix } });
    gws.push(gw);
    const { key } = await makeAccountKey(gw);
    const calls = up.requests.length;
    expect((await chat(gw, key, ASK)).cache).to.equal('miss');
    expect((await chat(gw, key, ASK)).cache).to.equal('hit');
    expect((await chat(gw, key, { ...ASK, stream: true })).cache).to.equal('hit');
    expect(up.requests.length - calls).to.equal(1);
  });

  it('Redis unreachable: every request is answered from upstream (a miss), never an error', async () => {
    const gw = await cacheGateway(up, { backend: 'redis', redis: { url: 'redis://127.0.0.1:1', timeout_ms: 100 } });
    gws.push(gw);
    const { key } = await makeAccountKey(gw);
    const a = await chat(gw, key, ASK);
    const b = await chat(gw, key, ASK);
    expect([a.status, a.cache, b.status, b.cache]).to.deep.equal([200, 'miss', 200, 'miss']);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).to.match(/gateway_cache_skipped_total\{reason="backend_error"\} [1-9]/);
  });

  it('an answer larger than max_entry_bytes is not stored', async () => {
    const gw = await cacheGateway(up, { max_entry_bytes: 100 });
    gws.push(gw);
    const { key } = await makeAccountKey(gw);
    expect((await chat(gw, key, ASK)).cache).to.equal('miss');
    expect((await chat(gw, key, ASK)).cache).to.equal('miss');
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).to.match(/gateway_cache_skipped_total\{reason="too_large"\} 2/);
  });

  it('scope: global shares entries across accounts; keys: out caches only keys set on', async () => {
    const global = await cacheGateway(up, { scope: 'global' });
    gws.push(global);
    const a = await makeAccountKey(global);
    const b = await makeAccountKey(global);
    expect((await chat(global, a.key, ASK)).cache).to.equal('miss');
    expect((await chat(global, b.key, ASK)).cache).to.equal('hit');
    const out = await cacheGateway(up, { keys: 'out' });
    gws.push(out);
    const k = await makeAccountKey(out);
    expect((await chat(out, k.key, ASK)).cache).to.equal('bypass');
    await adminCall(out, 'PUT', `/v1/accounts/${k.accountId}/cache`, { enabled: true });
    expect((await chat(out, k.key, ASK)).cache).to.equal('miss');
    expect((await chat(out, k.key, ASK)).cache).to.equal('hit');
  });

  it('with no model cached the plugin has no step on the chain: no header, every request upstream', async () => {
    const gw = await cacheGateway(up, { models: [] });
    gws.push(gw);
    const { key } = await makeAccountKey(gw);
    const calls = up.requests.length;
    const a = await chat(gw, key, ASK);
    const b = await chat(gw, key, ASK);
    expect([a.status, a.cache, b.cache]).to.deep.equal([200, null, null]);
    expect(up.requests.length - calls).to.equal(2);
  });
});
