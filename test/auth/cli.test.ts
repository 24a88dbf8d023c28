import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fromObject } from '../../src/config/load';
import { openStore } from '../../src/store/index';
import { cliActor } from '../../src/cli/store-cli';
import { startTestGateway } from '../helpers/gateway';
import { postJson } from '../helpers/gateway';
import { ADMIN_KEY } from '../helpers/accounts';

const run = promisify(execFile);

describe('gateway accounts / keys CLI on the configured store, audited', function () {
  this.timeout(60000);
  const dir = mkdtempSync(join(tmpdir(), 'gw-cli-'));
  const cfgPath = join(dir, 'g.yaml');
  const db = join(dir, 'g.db');
  writeFileSync(
    cfgPath,
    `store: { driver: sqlite, path: ${db} }\nproviders: [{ name: mock, type: mock }]\nmodels: [{ id: m, deployments: [{ provider: mock, model: x }] }]\nplugins: [auth, routing]\n`,
  );
  const cli = async (...args: string[]) =>
    (
      await run(process.execPath, ['--require', 'tsx/cjs', 'src/cli.ts', ...args, '--config', cfgPath], {
        env: { ...process.env, GATEWAY_ADMIN_KEY: ADMIN_KEY },
      })
    ).stdout;

  it('creates an account and a key that the gateway then accepts; disables and deletes it; each change audited', async () => {
    const account = JSON.parse(await cli('accounts', 'create', '--name', 'ops', '--credits', '3', '--json')) as {
      id: string;
      credits: number;
    };
    expect(account.credits).to.equal(3);
    expect(await cli('accounts', 'list'))
      .to.match(/^id\s+name/)
      .and.include(account.id);
    const key = JSON.parse(
      await cli(
        'keys',
        'create',
        '--account',
        account.id,
        '--name',
        'deploy',
        '--limit',
        '1',
        '--reset',
        'daily',
        '--json',
      ),
    ) as { key: string; hash: string; limit: number };
    expect(key.key).to.match(/^sk-gw-/);
    expect(key.limit).to.equal(1);
    const listed = JSON.parse(await cli('keys', 'list', '--json')) as { hash: string; key?: string };
    expect(listed.hash).to.equal(key.hash);
    expect(listed).to.not.have.property('key');

    const gw = await startTestGateway(
      fromObject(
        {
          server: { port: 0, log_level: 'silent' },
          store: { driver: 'sqlite', path: db },
          providers: [{ name: 'mock', type: 'mock' }],
          models: [{ id: 'm', deployments: [{ provider: 'mock', model: 'x' }] }],
          plugins: ['auth', 'routing'],
        },
        { env: { GATEWAY_ADMIN_KEY: ADMIN_KEY } },
      ),
    );
    try {
      const ask = () =>
        postJson(
          `${gw.url}/v1/chat/completions`,
          { model: 'm', messages: [{ role: 'user', content: 'hi' }] },
          { authorization: `Bearer ${key.key}` },
        );
      expect((await ask()).status).to.equal(200);
      expect(JSON.parse(await cli('keys', 'disable', key.hash, '--json'))).to.deep.equal({
        hash: key.hash,
        disabled: true,
      });
      await new Promise((r) => setTimeout(r, 2100)); // the auth cache bound
      expect((await ask()).status).to.equal(401);
    } finally {
      await gw.stop();
    }
    expect(JSON.parse(await cli('keys', 'delete', key.hash, '--json'))).to.deep.equal({
      hash: key.hash,
      deleted: true,
    });
    const err = await cli('keys', 'delete', key.hash).catch((e: { code: number; stderr: string }) => e);
    expect((err as { code: number }).code).to.equal(2);
    const topped = JSON.parse(await cli('accounts', 'credits', 'add', 'ops', '-1.5', '--json')) as { credits: number };
    expect(topped.credits).to.equal(1.5);

    // Every change above is in the audit log: actor the CLI and who ran it, role admin, source cli, no address, never
    // the raw key.
    const store = await openStore(
      fromObject({ store: { driver: 'sqlite', path: db }, providers: [], models: [] }, { env: {} }).store,
    );
    try {
      const log = await store.audit.list({ limit: 100 });
      expect(log.map((r) => [r.action, r.target])).to.deep.equal([
        ['credits.add', account.id],
        ['key.delete', key.hash],
        ['key.disable', key.hash],
        ['key.create', key.hash],
        ['account.create', account.id],
      ]);
      const actor = `cli:${userInfo().username}@${hostname()}`;
      for (const r of log) expect(r).to.include({ actor, role: 'admin', source: 'cli', address: null });
      expect(log[0].before).to.deep.equal({ credits: 3 });
      expect(log[0].after).to.deep.equal({ amount: -1.5, credits: 1.5 });
      expect(log[2].before).to.deep.include({ disabled: false });
      expect(log[2].after).to.deep.include({ disabled: true });
      expect(JSON.stringify(log)).to.not.contain(key.key);
    } finally {
      await store.close();
    }
  });

  it('names who ran it: the user and host, and the user behind sudo', () => {
    const me = userInfo().username;
    expect(cliActor({})).to.equal(`cli:${me}@${hostname()}`);
    expect(cliActor({ SUDO_USER: `${me}-not` })).to.equal(`cli:${me}@${hostname()} (sudo from ${me}-not)`);
    expect(cliActor({ SUDO_USER: me }), 'sudo to oneself says nothing more').to.equal(`cli:${me}@${hostname()}`);
  });
});
