import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseConfig } from '../../src/config/load';
import { configWarnings } from '../../src/config/warnings';

const run = promisify(execFile);
const config = (models: string) => `
providers:
  - { name: mock, type: mock }
models:
${models}
plugins: [routing]
`;

describe('gateway check: a model without pricing', function () {
  this.timeout(60000);

  it('warns about a model with no price, not about a priced one or one marked free: true', () => {
    const c = parseConfig(
      config(`  - { id: a/unpriced, deployments: [{ provider: mock, model: m }] }
  - { id: a/priced, pricing: { prompt: 0.000001, completion: 0.000002 }, deployments: [{ provider: mock, model: m }] }
  - { id: a/cache-only, pricing: { cache_read: 0.0000001 }, deployments: [{ provider: mock, model: m }] }
  - { id: a/free, pricing: { free: true }, deployments: [{ provider: mock, model: m }] }`),
      { env: {} },
    );
    const w = configWarnings(c);
    expect(w).to.have.length(1);
    expect(w[0]).to.include('a/unpriced').and.include('free: true');
  });

  it('prints the warning on stderr and still exits 0; the root gateway.yaml has none', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'gw-price-')), 'g.yaml');
    writeFileSync(file, config('  - { id: a/unpriced, deployments: [{ provider: mock, model: m }] }'));
    const r = await run(process.execPath, ['--require', 'tsx/cjs', 'src/cli.ts', 'check', '--config', file]);
    expect(r.stdout).to.include('OK');
    expect(r.stderr).to.match(/warning: models\[id=a\/unpriced\]: no pricing/);
    const root = await run(
      process.execPath,
      ['--require', 'tsx/cjs', 'src/cli.ts', 'check', '--config', 'gateway.yaml'],
      { env: { ...process.env, GATEWAY_CONFIG: '' } },
    );
    expect(root.stderr).to.not.include('warning');
  });
});
