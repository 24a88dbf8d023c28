import { expect } from 'chai';
import { Client } from 'pg';
import { postJson } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../../helpers/accounts';
import { freshPostgresUrl, POSTGRES_URL } from '../../helpers/postgres';
import { startGatewayProcess, type GatewayProcess } from '../../helpers/process';
import { exactRequest } from '../../helpers/credit';
import { fromNano, toNano } from '../../../src/store/money';
import type { MockUpstream } from '../../helpers/mock-upstream';
import { honestUpstream } from './honest-upstream';

/** The account's ledger sum and the sum of its generation records' costs, read from the database. */
async function ledgerAndRecords(db: Client, accountId: string): Promise<{ ledger: number; records: number }> {
  const sum = async (sql: string) => Number((await db.query(sql, [accountId])).rows[0].s);
  return {
    ledger: await sum('SELECT COALESCE(SUM(amount),0) AS s FROM credit_ledger WHERE account_id = $1'),
    records: await sum('SELECT COALESCE(SUM(cost),0) AS s FROM generations WHERE account_id = $1'),
  };
}

/** Waits until no reservation of these accounts is open (settlements may answer after the response). */
async function openReservationsGone(db: Client, accountIds: string[]): Promise<void> {
  let open = 1;
  for (let i = 0; i < 100 && open > 0; i++) {
    const r = await db.query('SELECT COUNT(*) AS n FROM credit_reservations WHERE account_id = ANY($1)', [accountIds]);
    open = Number(r.rows[0].n);
    if (open > 0) await new Promise((r) => setTimeout(r, 20));
  }
  expect(open).to.equal(0);
}

describe('credit across two gateway processes on one PostgreSQL database', function () {
  this.timeout(60000);
  let url: string;
  let up: MockUpstream;
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
      models: [
        {
          id: 'mock/gpt-4o-mini',
          pricing: { prompt: 0.000001, completion: 0.000002 },
          deployments: [{ provider: 'mock', model: 'm' }],
        },
      ],
      plugins: ['auth', 'params', { fallback: { num_retries: 0 } }, 'credit', 'routing'],
    };
    up = await honestUpstream().start();
    const models = cfg.models as Array<Record<string, unknown>>;
    (cfg.providers as Array<Record<string, unknown>>).push({ name: 'up', type: 'openai', api_base: `${up.url}/v1` });
    models.push({
      id: 'up/4o',
      pricing: { prompt: 0.00001, completion: 0.00003 },
      credit_bound: { image_tokens: { low: 85, high: 1445 } },
      deployments: [{ provider: 'up', model: 'gpt-4o' }],
    });
    models.push({
      id: 'up/fails',
      pricing: { prompt: 0.00001, completion: 0.00003 },
      deployments: [{ provider: 'up', model: 'fail' }],
    });
    models.push({
      id: 'up/liar',
      pricing: { prompt: 0.00001, completion: 0.00003 },
      deployments: [{ provider: 'up', model: 'liar-huge' }],
    });
    models.push({
      id: 'up/pricey',
      pricing: { prompt: 0.0001, completion: 0.0003 },
      deployments: [{ provider: 'up', model: 'gpt-4o' }],
    });
    // log_level warn hides the listening line: start at info, it is one line per request.
    cfg.server.log_level = 'info';
    procs.push(await startGatewayProcess(cfg, { GATEWAY_ADMIN_KEY: ADMIN_KEY }));
    procs.push(await startGatewayProcess(cfg, { GATEWAY_ADMIN_KEY: ADMIN_KEY }));
  });
  after(async () => {
    for (const p of procs) await p.stop();
    await up?.stop();
  });

  it('of 200 concurrent requests split over both processes at least N succeed; nothing overspent; ledger = records', async () => {
    const N = 23;
    const { body, cost, reserve } = exactRequest();
    const { key, accountId, hash } = await makeAccountKey(procs[0], { credits: 1000, limit: fromNano(N * reserve) });
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        postJson(`${procs[i % 2].url}/v1/chat/completions`, body, { authorization: `Bearer ${key}` }).then(async (r) =>
          r.status === 200 || r.status === 402 ? r.status : `${r.status} ${await r.text()}`,
        ),
      ),
    );
    if (results.some((s) => s !== 200 && s !== 402))
      console.log(
        procs[0]
          .output()
          .split('\n')
          .filter((l) => l.includes('unhandled'))
          .slice(0, 2)
          .join('\n'),
      );
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
      const { ledger, records } = await ledgerAndRecords(db, accountId);
      expect(ledger).to.equal(records);
      expect(records).to.equal(ok * cost);
    } finally {
      await db.end();
    }
  });

  it('6 accounts with 2 keys each, 360 concurrent requests over both processes: settlements committed in batches that share accounts neither deadlock nor overspend, and every account balances', async () => {
    const { body, cost, reserve } = exactRequest();
    // Each account affords at most 30 of its 60 requests, each key at most 20 of its 30: both refusals happen.
    const credits = Math.max(30 * cost, 2 * reserve);
    const limit = Math.max(20 * cost, reserve);
    const accounts: Array<{ id: string; keys: Array<{ key: string; hash: string }> }> = [];
    for (let a = 0; a < 6; a++) {
      const first = await makeAccountKey(procs[0], { credits: fromNano(credits), limit: fromNano(limit) });
      const k = await adminCall(procs[0], 'POST', '/v1/keys', {
        name: 'k2',
        account_id: first.accountId,
        limit: fromNano(limit),
      });
      const second = { key: k.body.key as string, hash: (k.body.data as { hash: string }).hash };
      accounts.push({ id: first.accountId, keys: [first, second] });
    }
    const results = await Promise.all(
      Array.from({ length: 360 }, (_, i) => {
        const key = accounts[i % 6].keys[Math.floor(i / 6) % 2].key;
        return postJson(`${procs[i % 2].url}/v1/chat/completions`, body, { authorization: `Bearer ${key}` }).then(
          async (r) => (r.status === 200 || r.status === 402 ? r.status : `${r.status} ${await r.text()}`),
        );
      }),
    );
    expect(results.filter((s) => s !== 200 && s !== 402)).to.deep.equal([]);
    const db = new Client({ connectionString: url });
    await db.connect();
    try {
      const ids = accounts.map((a) => a.id);
      await openReservationsGone(db, ids);
      for (const a of accounts) {
        const acct = (await db.query('SELECT credits, usage, reserved FROM accounts WHERE id = $1', [a.id])).rows[0];
        const { ledger, records } = await ledgerAndRecords(db, a.id);
        expect(Number(acct.reserved)).to.equal(0);
        expect(Number(acct.usage)).to.equal(ledger).and.equal(records);
        expect(Number(acct.usage)).to.be.at.most(Number(acct.credits));
        expect(Number(acct.usage) % cost).to.equal(0);
        for (const k of a.keys) {
          const key = (await db.query('SELECT usage, reserved FROM api_keys WHERE hash = $1', [k.hash])).rows[0];
          expect(Number(key.reserved)).to.equal(0);
          expect(Number(key.usage)).to.be.at.most(limit);
        }
      }
      const ok = results.filter((s) => s === 200).length;
      const sum = await db.query('SELECT COALESCE(SUM(usage), 0) AS s FROM accounts WHERE id = ANY($1)', [ids]);
      expect(Number(sum.rows[0].s)).to.equal(ok * cost);
      expect(ok).to.be.within(1, 359);
    } finally {
      await db.end();
    }
  });

  it('images at the worst honest count, pricier fallbacks and a lying upstream, 120 requests over both processes: the limit holds and the books balance', async () => {
    const { key, accountId, hash } = await makeAccountKey(procs[0], { credits: 1000, limit: 1 });
    const img = { type: 'image_url', image_url: { url: 'https://img.example/a.png', detail: 'high' } };
    const body = (i: number) =>
      i % 3 === 0
        ? {
            model: 'up/4o',
            max_tokens: 200,
            messages: [{ role: 'user', content: [{ type: 'text', text: `look ${i}` }, img] }],
          }
        : i % 3 === 1
          ? { model: 'up/liar', max_tokens: 200, messages: [{ role: 'user', content: `lie ${i}` }] }
          : {
              model: 'up/fails',
              max_tokens: 200,
              fallbacks: ['up/pricey'],
              messages: [{ role: 'user', content: `fall back ${i}` }],
            };
    const results = await Promise.all(
      Array.from({ length: 120 }, (_, i) =>
        postJson(`${procs[i % 2].url}/v1/chat/completions`, body(i), { authorization: `Bearer ${key}` }).then(
          async (r) => ({ status: r.status, text: await r.text() }),
        ),
      ),
    );
    expect(results.filter((r) => r.status !== 200 && r.status !== 402).map((r) => r.text)).to.deep.equal([]);
    const ok = results.filter((r) => r.status === 200);
    expect(ok.length).to.be.within(1, 119);
    const returned = ok.reduce((s, r) => s + toNano((JSON.parse(r.text) as { usage: { cost: number } }).usage.cost), 0);
    const db = new Client({ connectionString: url });
    await db.connect();
    try {
      let open = 1;
      for (let i = 0; i < 100 && open > 0; i++) {
        open = Number(
          (await db.query('SELECT COUNT(*) AS n FROM credit_reservations WHERE account_id = $1', [accountId])).rows[0]
            .n,
        );
        if (open > 0) await new Promise((r) => setTimeout(r, 20));
      }
      expect(open).to.equal(0);
      const k = (await db.query('SELECT usage, reserved, credit_limit FROM api_keys WHERE hash = $1', [hash])).rows[0];
      expect(Number(k.usage)).to.be.at.most(Number(k.credit_limit));
      const { ledger, records } = await ledgerAndRecords(db, accountId);
      expect(ledger).to.equal(records);
      expect(ledger).to.equal(returned);
      expect(Number(k.usage)).to.equal(ledger);
    } finally {
      await db.end();
    }
  });
});
