import { expect } from 'chai';
import { Client } from 'pg';
import { postJson } from '../helpers/gateway';
import { ADMIN_KEY, makeAccountKey } from '../helpers/accounts';
import { freshPostgresUrl, POSTGRES_URL } from '../helpers/postgres';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process';
import { exactRequest } from '../helpers/credit';
import { fromNano } from '../../src/store/money';

describe('credit across two gateway processes on one PostgreSQL database', function () {
  this.timeout(60000);
  let url: string;
  const procs: GatewayProcess[] = [];
  before(async function () {
    if (!POSTGRES_URL) {
      console.warn('    ! GATEWAY_TEST_POSTGRES_URL is not set; the two-process credit test did not run');
      this.skip();
    }
    url = await freshPostgresUrl();
    const cfg = {
      server: { host: '127.0.0.1', port: 0, log_level: 'warn' },
      store: { driver: 'postgres', url, pool_size: 10 },
      providers: [{ name: 'mock', type: 'mock' }],
      models: [{ id: 'mock/gpt-4o-mini', pricing: { prompt: 0.000001, completion: 0.000002 }, deployments: [{ provider: 'mock', model: 'm' }] }],
      plugins: ['auth', 'credit', 'routing'],
    };
    // log_level warn hides the listening line: start at info, it is one line per request.
    cfg.server.log_level = 'info';
    procs.push(await startGatewayProcess(cfg, { GATEWAY_ADMIN_KEY: ADMIN_KEY }));
    procs.push(await startGatewayProcess(cfg, { GATEWAY_ADMIN_KEY: ADMIN_KEY }));
  });
  after(async () => {
    for (const p of procs) await p.stop();
  });

  it('of 200 concurrent requests split over both processes at least N succeed; nothing overspent; ledger = records', async () => {
    const N = 23;
    const { body, cost, reserve } = exactRequest();
    const { key, accountId, hash } = await makeAccountKey(procs[0], { credits: 1000, limit: fromNano(N * reserve) });
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => postJson(`${procs[i % 2].url}/v1/chat/completions`, body, { authorization: `Bearer ${key}` }).then(async (r) => (r.status === 200 || r.status === 402 ? r.status : `${r.status} ${await r.text()}`))));
    if (results.some((s) => s !== 200 && s !== 402)) console.log(procs[0].output().split("\n").filter((l) => l.includes("unhandled")).slice(0, 2).join("\n"));
    expect(results.filter((s) => s !== 200 && s !== 402)).to.deep.equal([]);
    const ok = results.filter((s) => s === 200).length;
    expect(ok).to.be.within(N, Math.floor((N * reserve) / cost));
    expect(results.filter((s) => s === 402)).to.have.length(200 - ok);
    const db = new Client({ connectionString: url });
    await db.connect();
    try {
      let open = 1;
      for (let i = 0; i < 100 && open > 0; i++) {
        open = Number((await db.query('SELECT COUNT(*) AS n FROM credit_reservations')).rows[0].n);
        if (open > 0) await new Promise((r) => setTimeout(r, 20));
      }
      expect(open).to.equal(0);
      const k = (await db.query('SELECT usage, reserved, credit_limit FROM api_keys WHERE hash = $1', [hash])).rows[0];
      expect(Number(k.usage)).to.equal(ok * cost);
      expect(Number(k.usage)).to.be.at.most(Number(k.credit_limit));
      expect(Number(k.reserved)).to.equal(0);
      const ledger = Number((await db.query('SELECT COALESCE(SUM(amount),0) AS s FROM credit_ledger WHERE account_id = $1', [accountId])).rows[0].s);
      const records = Number((await db.query('SELECT COALESCE(SUM(cost),0) AS s FROM generations WHERE account_id = $1', [accountId])).rows[0].s);
      expect(ledger).to.equal(records);
      expect(records).to.equal(ok * cost);
    } finally {
      await db.end();
    }
  });
});
