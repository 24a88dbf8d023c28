import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { postJson } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../../helpers/accounts';
import { freshPostgresUrl, POSTGRES_URL } from '../../helpers/postgres';
import { startGatewayProcess, type GatewayProcess } from '../../helpers/process';
import { MockUpstream } from '../../helpers/mock-upstream';
import { generateKey } from '../../../src/auth/key-format';
import { gate, heldStream, OpenCounter, RATE_HEADERS, TOKEN_HEADERS, upstreamModel, upstreamProvider } from './helpers';

const REDIS_URL = process.env.GATEWAY_TEST_REDIS_URL || undefined;

describe('limits across two gateway processes (PostgreSQL + Redis)', function () {
  this.timeout(90000);
  const procs: GatewayProcess[] = [];
  const upstream = new MockUpstream();
  const counter = new OpenCounter();
  let hold = gate();

  before(async function () {
    if (!POSTGRES_URL || !REDIS_URL) {
      console.warn(
        '    ! GATEWAY_TEST_POSTGRES_URL or GATEWAY_TEST_REDIS_URL is not set; the two-replica limits test did not run',
      );
      this.skip();
    }
    await upstream.start();
    upstream.handler = (_r, res) => {
      counter.enter(res);
      return heldStream(res, hold.promise);
    };
    const cfg = {
      server: { host: '127.0.0.1', port: 0, log_level: 'info' },
      store: { driver: 'postgres', url: await freshPostgresUrl(), pool_size: 10 },
      providers: [{ name: 'mock', type: 'mock' }, upstreamProvider('up', upstream)],
      models: [
        {
          id: 'mock/gpt-4o-mini',
          pricing: { prompt: 0, completion: 0 },
          deployments: [{ provider: 'mock', model: 'm' }],
        },
        upstreamModel('up/slow', 'up'),
      ],
      plugins: [
        'auth',
        {
          limits: {
            store: 'redis',
            redis: { url: REDIS_URL, prefix: `gw-test-${randomBytes(6).toString('hex')}:` },
            auth_failures: { max: 6, window_ms: 60000 },
          },
        },
        'routing',
      ],
    };
    procs.push(await startGatewayProcess(cfg, { GATEWAY_ADMIN_KEY: ADMIN_KEY }));
    procs.push(await startGatewayProcess(cfg, { GATEWAY_ADMIN_KEY: ADMIN_KEY }));
  });
  after(async () => {
    hold.release();
    for (const p of procs) await p.stop();
    await upstream.stop();
  });

  const spread = (n: number, key: string, body: Record<string, unknown>) =>
    Promise.all(
      Array.from({ length: n }, (_, i) =>
        postJson(
          `${procs[i % 2].url}/v1/chat/completions`,
          { messages: [{ role: 'user', content: 'Hello there' }], ...body },
          { authorization: `Bearer ${key}` },
        ),
      ),
    );

  it('300 requests over both replicas against 100 requests/min: exactly 100 admitted, 200 refused with the headers', async () => {
    const { key, hash } = await makeAccountKey(procs[0]);
    expect(
      (await adminCall(procs[0], 'PUT', `/v1/keys/${hash}/limits`, { rate_limits: { rpm: 100 } })).status,
    ).to.equal(200);
    const answers = await spread(300, key, { model: 'mock/gpt-4o-mini' });
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s !== 200 && s !== 429)).to.deep.equal([]);
    if (statuses.filter((s) => s === 200).length !== 100)
      for (const p of procs)
        console.log(
          p
            .output()
            .split('\n')
            .filter((l) => l.includes('limits'))
            .slice(0, 5)
            .join('\n'),
        );
    expect(statuses.filter((s) => s === 200)).to.have.length(100);
    for (const r of answers) for (const h of RATE_HEADERS) expect(r.headers.get(h), h).to.be.a('string');
    for (const r of answers.filter((a) => a.status === 429)) {
      expect(Number(r.headers.get('retry-after'))).to.be.within(1, 60);
      expect(r.headers.get('x-ratelimit-remaining-requests')).to.equal('0');
    }
    await Promise.all(answers.map((r) => r.body?.cancel()));
    // The limit is shared, not per process: whichever replica admitted fewer (even none, when the other's requests
    // reached Redis first), each now refuses the next request, its own count notwithstanding.
    for (const p of procs) {
      const next = await postJson(
        `${p.url}/v1/chat/completions`,
        { model: 'mock/gpt-4o-mini', messages: [{ role: 'user', content: 'Hello there' }] },
        { authorization: `Bearer ${key}` },
      );
      expect(next.status, p.url).to.equal(429);
      await next.body?.cancel();
    }
  });

  it('tokens/min with streams: the admitted bounds never pass the limit across both replicas, then settle', async () => {
    hold = gate();
    const { key, hash } = await makeAccountKey(procs[0]);
    const tpm = 2000;
    await adminCall(procs[0], 'PUT', `/v1/keys/${hash}/limits`, { rate_limits: { tpm } });
    const answers = await spread(60, key, { model: 'up/slow', stream: true, max_tokens: 150 });
    const ok = answers.filter((r) => r.status === 200);
    expect(answers.filter((r) => r.status !== 200 && r.status !== 429)).to.deep.equal([]);
    // Every request has the same bound: the first admitted one shows it in its remaining tokens.
    const remaining = ok.map((r) => Number(r.headers.get('x-ratelimit-remaining-tokens')));
    const bound = tpm - Math.max(...remaining);
    expect(bound).to.be.greaterThan(150);
    expect(ok).to.have.length(Math.floor(tpm / bound));
    for (const r of answers) for (const h of TOKEN_HEADERS) expect(r.headers.get(h), h).to.be.a('string');
    hold.release();
    await Promise.all(answers.map((r) => r.text()));
    // Settled to the real count (13 tokens per stream): room for more now.
    const after = await spread(2, key, { model: 'up/slow', stream: true, max_tokens: 150 });
    expect(after.map((r) => r.status)).to.deep.equal([200, 200]);
    await Promise.all(after.map((r) => r.text()));
  });

  it('concurrency 5 with 50 slow streams over both replicas: never more than 5 open upstream', async () => {
    hold = gate();
    counter.max = 0;
    const { key, hash } = await makeAccountKey(procs[0]);
    await adminCall(procs[0], 'PUT', `/v1/keys/${hash}/limits`, { rate_limits: { concurrency: 5 } });
    const answers = await spread(50, key, { model: 'up/slow', stream: true });
    expect(answers.filter((r) => r.status === 200)).to.have.length(5);
    const refused = answers.filter((r) => r.status === 429);
    expect(refused).to.have.length(45);
    for (const r of refused) {
      expect(Number(r.headers.get('retry-after'))).to.be.at.least(1);
      expect(((await r.json()) as { error: { code: string } }).error.code).to.equal('concurrency_limit_exceeded');
    }
    expect(counter.max).to.equal(5);
    hold.release();
    await Promise.all(answers.filter((r) => r.status === 200).map((r) => r.text()));
    // Slots come back when the streams end.
    hold = gate();
    hold.release();
    const again = await spread(5, key, { model: 'up/slow', stream: true });
    expect(again.map((r) => r.status)).to.deep.equal([200, 200, 200, 200, 200]);
    await Promise.all(again.map((r) => r.text()));
    expect(counter.max).to.be.at.most(5);
  });

  // Last: it blocks this test's address (the admin calls included) for a minute.
  it('failed authentications count across replicas: spread over both, the address is blocked on both', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await postJson(
        `${procs[i % 2].url}/v1/chat/completions`,
        { model: 'mock/gpt-4o-mini', messages: [] },
        { authorization: `Bearer ${generateKey()}` },
      );
      statuses.push(r.status);
      await r.body?.cancel();
    }
    // 5 per replica never reaches a replica's own limit of 6: only the shared count blocks.
    expect(statuses.slice(0, 6)).to.deep.equal(Array(6).fill(401));
    await new Promise((r) => setTimeout(r, 200));
    for (const p of procs) {
      const r = await postJson(
        `${p.url}/v1/chat/completions`,
        { model: 'mock/gpt-4o-mini', messages: [] },
        { authorization: `Bearer ${generateKey()}` },
      );
      expect(r.status).to.equal(429);
      expect(Number(r.headers.get('retry-after'))).to.be.within(1, 60);
      await r.body?.cancel();
    }
  });
});
