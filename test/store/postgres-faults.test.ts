import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { startTestGateway, testConfig, type TestGateway } from '../helpers/gateway';
import { ADMIN_KEY, makeAccountKey } from '../helpers/accounts';
import { freshPostgresUrl, POSTGRES_URL } from '../helpers/postgres';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';

const MODEL = 'mock/gpt-4o-mini';

function gatewayConfig(url: string, store: Record<string, unknown> = {}) {
  return testConfig(
    { store: { driver: 'postgres', url, pool_size: 4, ...store }, plugins: ['auth', 'credit', 'storage', 'routing'] },
    { GATEWAY_ADMIN_KEY: ADMIN_KEY },
  );
}

async function chat(
  gw: { url: string },
  key: string,
  n: number,
): Promise<{ status: number; id?: string; code?: string; retryAfter: string | null; ms: number }> {
  const t = performance.now();
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({
      model: MODEL,
      max_tokens: 5,
      messages: [{ role: 'user', content: `request number ${n} with a few words` }],
    }),
  });
  const body = (await res.json()) as { id?: string; error?: { code: string } };
  return {
    status: res.status,
    id: body.id,
    code: body.error?.code,
    retryAfter: res.headers.get('retry-after'),
    ms: performance.now() - t,
  };
}

/** Ids present in the test schema's tables (read through a connection of the test's own). */
async function storedIds(
  url: string,
): Promise<{ ledger: Set<string>; generations: Set<string>; responses: Set<string> }> {
  const c = new Client({ connectionString: url });
  await c.connect();
  try {
    const col = async (sql: string) => new Set((await c.query<{ id: string }>(sql)).rows.map((r) => r.id));
    return {
      ledger: await col('SELECT generation_id AS id FROM credit_ledger'),
      generations: await col('SELECT id FROM generations'),
      responses: await col('SELECT id FROM responses'),
    };
  } finally {
    await c.end();
  }
}

describe('PostgreSQL store under database faults', function () {
  this.timeout(60000);
  before(function () {
    if (!POSTGRES_URL) {
      console.warn('    ! GATEWAY_TEST_POSTGRES_URL is not set; the PostgreSQL fault tests did not run');
      this.skip();
    }
  });

  it('backends terminated repeatedly under load: the gateway stays up, serves again, loses nothing it acknowledged', async () => {
    const base = await freshPostgresUrl();
    const app = `gw-faults-${randomBytes(4).toString('hex')}`;
    const url = new URL(base);
    url.searchParams.set('application_name', app);
    const gw: TestGateway = await startTestGateway(gatewayConfig(url.toString()));
    const admin = new Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    try {
      const { key } = await makeAccountKey(gw, { credits: 1000 });
      let stop = false;
      let terminated = 0;
      // Every 150 ms, terminate every backend of this gateway (what a failover or a restart does to it).
      const killer = (async () => {
        while (!stop) {
          const r = await admin.query(
            'SELECT pg_terminate_backend(pid) AS t FROM pg_stat_activity WHERE application_name = $1',
            [app],
          );
          terminated += r.rowCount ?? 0;
          await new Promise((res) => setTimeout(res, 150));
        }
      })();
      const results: Awaited<ReturnType<typeof chat>>[] = [];
      let n = 0;
      // The load lasts until 150 requests are answered and more than 10 backends were terminated under it (a fast
      // machine answers 150 within fewer rounds of the killer), and never past 2,000 requests.
      await Promise.all(
        Array.from({ length: 6 }, async () => {
          while ((n < 150 || terminated <= 10) && n < 2000) results.push(await chat(gw, key, n++));
        }),
      );
      stop = true;
      await killer;
      expect(terminated, 'backends terminated during the load').to.be.greaterThan(10);
      const ok = results.filter((r) => r.status === 200);
      const refused = results.filter((r) => r.status !== 200);
      for (const r of refused) {
        expect(r.status, JSON.stringify(r)).to.equal(503);
        expect(r.code).to.equal('store_unavailable');
        expect(r.retryAfter).to.match(/^\d+$/);
      }
      expect(ok.length, `${refused.length} of ${results.length} refused`).to.be.greaterThan(results.length / 2);
      expect(
        gw.logs.filter((l) => l.includes('settlement failed') || l.includes('storing the response failed')),
        'writes after an answer that failed',
      ).to.deep.equal([]);

      // Served again, every request, once the terminations stop.
      for (let i = 0; i < 10; i++) expect((await chat(gw, key, 1000 + i)).status).to.equal(200);
      expect((await fetch(`${gw.url}/ready`)).status).to.equal(200);

      // Everything acknowledged is in the database: its ledger row, generation record and stored response.
      const stored = await storedIds(base);
      for (const r of ok) {
        expect(stored.ledger.has(r.id!), `ledger row of ${r.id}`).to.equal(true);
        expect(stored.generations.has(r.id!), `generation of ${r.id}`).to.equal(true);
        expect(stored.responses.has(r.id!), `stored response ${r.id}`).to.equal(true);
      }
    } finally {
      await admin.end();
      await gw.stop();
    }
  });

  it('a blackholed database gives fast 503s (and /ready 503) instead of hangs, and the gateway recovers when it answers again', async () => {
    const pg = new URL(POSTGRES_URL!);
    const proxy: TcpProxy = await startTcpProxy(pg.hostname, Number(pg.port || 5432));
    const base = await freshPostgresUrl();
    const url = new URL(base);
    url.host = `127.0.0.1:${proxy.port}`;
    const gw = await startTestGateway(
      gatewayConfig(url.toString(), { statement_timeout_ms: 1000, connect_timeout_ms: 1000 }),
    );
    try {
      const { key } = await makeAccountKey(gw, { credits: 1000 });
      expect((await chat(gw, key, 0)).status).to.equal(200);

      proxy.blackhole();
      // The first requests find out (bounded by the client-side timeouts), then every answer is immediate.
      const first = await Promise.all([1, 2, 3].map((i) => chat(gw, key, i)));
      for (const r of first) expect(r.ms, 'the first requests are bounded, not hung').to.be.below(8000);
      const during: Awaited<ReturnType<typeof chat>>[] = [];
      for (let i = 0; i < 20; i++) during.push(await chat(gw, key, 10 + i));
      for (const r of during) {
        expect(r.status).to.equal(503);
        expect(r.code).to.equal('store_unavailable');
        expect(r.retryAfter).to.match(/^\d+$/);
      }
      const slowest = Math.max(...during.map((r) => r.ms));
      expect(slowest, 'answers during the outage are fast').to.be.below(500);
      const t = performance.now();
      const ready = await fetch(`${gw.url}/ready`);
      expect(ready.status).to.equal(503);
      expect(performance.now() - t).to.be.below(500);

      proxy.restore();
      const deadline = Date.now() + 15000;
      while ((await fetch(`${gw.url}/ready`)).status !== 200) {
        expect(Date.now(), '/ready true again after the database answers').to.be.below(deadline);
        await new Promise((r) => setTimeout(r, 100));
      }
      const after = await chat(gw, key, 100);
      expect(after.status).to.equal(200);
      const stored = await storedIds(base);
      expect(
        stored.ledger.has(after.id!) && stored.generations.has(after.id!) && stored.responses.has(after.id!),
      ).to.equal(true);
    } finally {
      await gw.stop();
      await proxy.close();
    }
  });
});
