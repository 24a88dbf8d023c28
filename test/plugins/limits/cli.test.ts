import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fromObject } from '../../../src/config/load';
import { startTestGateway, postJson } from '../../helpers/gateway';

const run = promisify(execFile);

describe('gateway keys limits / accounts limits CLI', function () {
  this.timeout(60000);
  const dir = mkdtempSync(join(tmpdir(), 'gw-limits-cli-'));
  const cfgPath = join(dir, 'g.yaml');
  const db = join(dir, 'g.db');
  const models = [
    { id: 'mock/a', deployments: [{ provider: 'mock', model: 'x' }] },
    { id: 'other/b', deployments: [{ provider: 'mock', model: 'x' }] },
  ];
  writeFileSync(
    cfgPath,
    JSON.stringify({
      store: { driver: 'sqlite', path: db },
      providers: [{ name: 'mock', type: 'mock' }],
      models,
      plugins: ['auth', 'limits', 'routing'],
    }),
  );
  const cli = async (...args: string[]) =>
    (
      await run(process.execPath, ['--require', 'tsx/cjs', 'src/cli.ts', ...args, '--config', cfgPath], {
        env: { ...process.env, GATEWAY_ADMIN_KEY: 'cli-admin-key-5d0c94a7e1b36f28ac9e0b71' },
      })
    ).stdout;

  it("sets a key's allowlist and limits and an account's plan; the gateway enforces them", async () => {
    const account = JSON.parse(await cli('accounts', 'create', '--name', 'ops', '--json')) as { id: string };
    const key = JSON.parse(await cli('keys', 'create', '--account', account.id, '--name', 'deploy', '--json')) as {
      key: string;
      hash: string;
    };
    const set = JSON.parse(
      await cli('keys', 'limits', key.hash, '--models', 'mock/*', '--rpm', '2', '--concurrency', '4', '--json'),
    );
    expect(set).to.deep.equal({
      allowed_models: ['mock/*'],
      rate_limits: { rpm: 2, concurrency: 4 },
      budget_alerts: null,
    });
    const acct = JSON.parse(await cli('accounts', 'limits', account.id, '--plan', 'pro', '--tpm', '1000000', '--json'));
    expect(acct).to.deep.equal({
      allowed_models: null,
      rate_limits: { plan: 'pro', tpm: 1000000 },
      budget_alerts: null,
    });
    expect(JSON.parse(await cli('keys', 'limits', key.hash, '--rpm', 'inherit', '--json')).rate_limits).to.deep.equal({
      concurrency: 4,
    });
    await cli('keys', 'limits', key.hash, '--rpm', '2');
    const bad = await cli('keys', 'limits', key.hash, '--rpm=1.5').then(
      () => 0,
      (e: { code: number; stderr: string }) => (expect(e.stderr).to.contain('--rpm'), e.code),
    );
    expect(bad).to.equal(2);

    const gw = await startTestGateway(
      fromObject(
        {
          server: { port: 0, log_level: 'silent' },
          store: { driver: 'sqlite', path: db },
          providers: [{ name: 'mock', type: 'mock' }],
          models,
          plugins: ['auth', 'limits', 'routing'],
        },
        { env: { GATEWAY_ADMIN_KEY: 'cli-admin-key-5d0c94a7e1b36f28ac9e0b71' } },
      ),
    );
    try {
      const ask = (model: string) =>
        postJson(
          `${gw.url}/v1/chat/completions`,
          { model, messages: [{ role: 'user', content: 'hi' }] },
          { authorization: `Bearer ${key.key}` },
        );
      expect((await ask('other/b')).status).to.equal(403);
      expect([(await ask('mock/a')).status, (await ask('mock/a')).status, (await ask('mock/a')).status]).to.deep.equal([
        200, 200, 429,
      ]);
    } finally {
      await gw.stop();
    }
  });

  it('sets budget notice thresholds of a key and an account (numbers, none, inherit); a wrong one says why', async () => {
    const account = JSON.parse(await cli('accounts', 'create', '--name', 'alerts', '--json')) as { id: string };
    const key = JSON.parse(await cli('keys', 'create', '--account', account.id, '--name', 'watched', '--json')) as {
      hash: string;
    };
    const k = JSON.parse(await cli('keys', 'limits', key.hash, '--alert-percent', '50, 90', '--json'));
    expect(k.budget_alerts).to.deep.equal({ key_limit_percent: [50, 90] });
    const a = JSON.parse(
      await cli('accounts', 'limits', account.id, '--alert-balance', '5,1', '--alert-percent', 'none', '--json'),
    );
    expect(a.budget_alerts).to.deep.equal({ key_limit_percent: [], account_balance_below: [5, 1] });
    const back = JSON.parse(await cli('accounts', 'limits', account.id, '--alert-percent', 'inherit', '--json'));
    expect(back.budget_alerts).to.deep.equal({ account_balance_below: [5, 1] });
    const cleared = JSON.parse(await cli('keys', 'limits', key.hash, '--alert-percent', 'inherit', '--json'));
    expect(cleared.budget_alerts).to.equal(null);
    // A balance threshold is an account's: the section refuses it on a key, as the admin API does; nothing is written.
    const refused = await cli('keys', 'limits', key.hash, '--alert-balance', '3', '--rpm', '9').then(
      () => '',
      (e: { stderr: string }) => e.stderr,
    );
    expect(refused).to.contain('budget_alerts.account_balance_below');
    expect(JSON.parse(await cli('keys', 'limits', key.hash, '--json')).rate_limits).to.equal(null);
    const wrong = await cli('keys', 'limits', key.hash, '--alert-percent', 'lots').then(
      () => '',
      (e: { stderr: string }) => e.stderr,
    );
    expect(wrong).to.contain('--alert-percent');
  });
});
