import { expect } from 'chai';
import Database from 'better-sqlite3';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fromObject } from '../../../src/config/load';
import { startTestGateway } from '../../helpers/gateway';
import { adminCall } from '../../helpers/accounts';

const run = promisify(execFile);
const ADMIN = 'cli-admin-key-5d0c94a7e1b36f28ac9e0b71';

describe('gateway presets CLI', function () {
  // Each CLI call is a process that loads the code with tsx: seconds each on a loaded machine.
  this.timeout(240000);
  const dir = mkdtempSync(join(tmpdir(), 'gw-presets-cli-'));
  const cfgPath = join(dir, 'g.yaml');
  const config = {
    store: { driver: 'sqlite', path: join(dir, 'g.db') },
    providers: [{ name: 'mock', type: 'mock' }],
    models: [{ id: 'mock/a', deployments: [{ provider: 'mock', model: 'x' }] }],
    presets: [{ name: 'fixed', model: 'mock/a' }],
    plugins: ['auth', 'routing'],
  };
  writeFileSync(cfgPath, JSON.stringify(config));
  const cli = async (...args: string[]) =>
    (
      await run(process.execPath, ['--require', 'tsx/cjs', 'src/cli.ts', ...args, '--config', cfgPath], {
        env: { ...process.env, GATEWAY_ADMIN_KEY: ADMIN },
      })
    ).stdout;
  const failure = (...args: string[]) =>
    cli(...args).then(
      () => '',
      (e: { stderr: string }) => e.stderr,
    );

  it('sets, lists and deletes stored presets, audited; refuses gateway.yaml’s and unknown models', async () => {
    const set = JSON.parse(
      await cli('presets', 'set', 'quick', '{"model":"mock/a","provider":{"sort":"price"}}', '--json'),
    );
    expect(set).to.deep.include({ name: 'quick', model: 'mock/a', source: 'store' });
    expect(await failure('presets', 'set', 'fixed', '{"model":"mock/a"}')).to.contain('gateway.yaml');
    expect(await failure('presets', 'set', 'x', '{"model":"nope/b"}')).to.contain("'nope/b'");
    const listed = JSON.parse(await cli('presets', 'list', '--json')) as Array<{ name: string; source: string }>;
    expect(listed.map((p) => [p.name, p.source])).to.deep.equal([
      ['fixed', 'config'],
      ['quick', 'store'],
    ]);
    // The gateway on the same store serves what the CLI made.
    const gw = await startTestGateway(
      fromObject({ ...config, server: { port: 0 } }, { env: { GATEWAY_ADMIN_KEY: ADMIN }, baseDir: dir }),
    );
    try {
      const got = await adminCall(gw, 'GET', '/v1/presets/quick', undefined, ADMIN);
      expect((got.body.data as { provider: unknown }).provider).to.deep.equal({ sort: 'price' });
    } finally {
      await gw.stop();
    }
    expect(JSON.parse(await cli('presets', 'delete', 'quick', '--json'))).to.deep.equal({
      name: 'quick',
      deleted: true,
    });
    const db = new Database(join(dir, 'g.db'), { readonly: true });
    try {
      const rows = db
        .prepare("SELECT action, target, source FROM audit_log WHERE action LIKE 'preset.%' ORDER BY created_at")
        .all();
      expect(rows).to.deep.equal([
        { action: 'preset.set', target: 'preset:quick', source: 'cli' },
        { action: 'preset.delete', target: 'preset:quick', source: 'cli' },
      ]);
    } finally {
      db.close();
    }
  });
});
