import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_KEY, adminCall } from '../helpers/accounts';
import { startTestGateway, testConfig, type TestGateway } from '../helpers/gateway';
import { freshPostgresUrl, POSTGRES_URL } from '../helpers/postgres';

/** 2^53 - 1 nano-credits: the most an amount or a balance may be. */
const MAX = 9007199254740991 / 1e9;

interface AccountJson {
  id: string;
  credits: number;
}

function moneyRange(name: string, store: () => Promise<Record<string, unknown>>) {
  describe(`amounts and balances held to the ledger's exact range (${name})`, function () {
    this.timeout(30000);
    let gw: TestGateway;
    let dir: string;

    before(async function () {
      dir = mkdtempSync(join(tmpdir(), 'gw-money-'));
      const s = await store().catch(() => null);
      if (!s) return this.skip();
      gw = await startTestGateway(
        testConfig({ store: s, plugins: ['auth', 'routing'] }, { GATEWAY_ADMIN_KEY: ADMIN_KEY }),
      );
    });
    after(async () => {
      await gw?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const account = async (credits: number) => {
      // Names are unique: one per call.
      const r = await adminCall(gw, 'POST', '/v1/accounts', { name: `rich-${Math.random()}`, credits });
      expect(r.status, JSON.stringify(r.body)).to.equal(201);
      return r.body.data as AccountJson;
    };
    const credits = async (id: string) =>
      ((await adminCall(gw, 'GET', `/v1/accounts/${id}`)).body.data as AccountJson).credits;
    const topUp = (id: string, amount: number) => adminCall(gw, 'POST', `/v1/accounts/${id}/credits`, { amount });
    const refused = (r: { status: number; body: Record<string, unknown> }, param: string) => {
      expect(r.status, JSON.stringify(r.body)).to.equal(400);
      const e = r.body.error as { type: string; param: string; code: string; message: string };
      expect(e.type).to.equal('invalid_request_error');
      expect(e.param).to.equal(param);
      return e;
    };

    it('a top-up past 2^53 nano-credits is a 400 naming amount, and nothing is written', async () => {
      const a = await account(9_000_000);
      const e = refused(await topUp(a.id, 9_000_000), 'amount');
      expect(e.code).to.equal('out_of_range');
      expect(e.message).to.include('9007199.254740991');
      expect(await credits(a.id)).to.equal(9_000_000);
      // Many top-ups never carry it past the range either (the check is on the balance, not the amount).
      for (let i = 0; i < 3; i++) refused(await topUp(a.id, 1_000_000), 'amount');
      expect(await credits(a.id)).to.equal(9_000_000);
    });

    it('up to the range exactly, every nano-credit counts; one more is refused', async () => {
      const a = await account(9_000_000);
      const to = await topUp(a.id, 7199.254740991);
      expect(to.status, JSON.stringify(to.body)).to.equal(200);
      expect(await credits(a.id)).to.equal(MAX);
      refused(await topUp(a.id, 0.000000001), 'amount');
      expect((await topUp(a.id, -0.000000001)).status).to.equal(200);
      expect(await credits(a.id)).to.equal(9007199254740990 / 1e9);
      expect((await topUp(a.id, 0.000000001)).status, 'a nano-credit added is not lost').to.equal(200);
      expect(await credits(a.id)).to.equal(MAX);
    });

    it('a removal below zero credits is refused too; amounts past the field range name their field', async () => {
      const a = await account(1);
      refused(await topUp(a.id, -2), 'amount');
      expect(await credits(a.id)).to.equal(1);
      expect((await topUp(a.id, -1)).status).to.equal(200);
      expect(await credits(a.id)).to.equal(0);
      refused(await topUp(a.id, 1e300), 'amount');
      refused(await adminCall(gw, 'POST', '/v1/accounts', { name: 'x', credits: 1e19 }), 'credits');
      refused(await adminCall(gw, 'POST', '/v1/keys', { name: 'k', account_id: a.id, limit: 1e19 }), 'limit');
      expect(await credits(a.id)).to.equal(0);
    });
  });
}

moneyRange('sqlite file', async () => ({
  driver: 'sqlite',
  path: join(mkdtempSync(join(tmpdir(), 'gw-money-db-')), 'g.db'),
}));
moneyRange('postgres', async () => {
  if (!POSTGRES_URL) {
    console.warn('    ! GATEWAY_TEST_POSTGRES_URL is not set; the PostgreSQL money range test did not run');
    throw new Error('skip');
  }
  return { driver: 'postgres', url: await freshPostgresUrl() };
});

describe('the CLI holds amounts to the same range', function () {
  this.timeout(60000);
  const dir = mkdtempSync(join(tmpdir(), 'gw-money-cli-'));
  const cfg = join(dir, 'g.yaml');
  writeFileSync(
    cfg,
    `store: { driver: sqlite, path: ${join(dir, 'g.db')} }\nproviders: [{ name: mock, type: mock }]\n` +
      `models: [{ id: m, deployments: [{ provider: mock, model: x }] }]\nplugins: [auth, routing]\n`,
  );
  after(() => rmSync(dir, { recursive: true, force: true }));
  const cli = (...args: string[]) =>
    new Promise<{ code: number; out: string }>((resolve) =>
      execFile(
        process.execPath,
        ['--require', 'tsx/cjs', 'src/cli.ts', ...args, '--config', cfg],
        { timeout: 20000, env: { ...process.env, GATEWAY_ADMIN_KEY: ADMIN_KEY } },
        (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, out: stdout + stderr }),
      ),
    );

  it('create, top-up and key limit past 2^53 nano-credits fail naming the argument; nothing is written', async () => {
    const big = await cli('accounts', 'create', '--name', 'big', '--credits', '1e19', '--json');
    expect(big.code, big.out).to.not.equal(0);
    expect(big.out).to.include('--credits');
    const made = await cli('accounts', 'create', '--name', 'rich', '--credits', '9000000', '--json');
    expect(made.code, made.out).to.equal(0);
    const add = await cli('accounts', 'credits', 'add', 'rich', '9000000');
    expect(add.code, add.out).to.not.equal(0);
    expect(add.out).to.include('AMOUNT');
    const limit = await cli('keys', 'create', '--account', 'rich', '--name', 'k', '--limit', '1e19');
    expect(limit.code, limit.out).to.not.equal(0);
    expect(limit.out).to.include('--limit');
    const list = await cli('accounts', 'list', '--json');
    const rows = JSON.parse(list.out) as AccountJson | AccountJson[];
    expect(Array.isArray(rows) ? rows.map((r) => r.credits) : [rows.credits]).to.deep.equal([9_000_000]);
  });
});
