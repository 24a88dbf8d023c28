import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const { generateAll, outDir } = require('../../scripts/gen-validators.js') as {
  generateAll(): Record<string, string>;
  outDir: string;
};

describe('validators generated at build time', function () {
  this.timeout(60000);

  it('are what the schemas compile to now (run `node scripts/gen-validators.js` after changing a schema)', () => {
    for (const [file, text] of Object.entries(generateAll()))
      expect(readFileSync(join(outDir, `${file}.ts`), 'utf8') === text, `src/validation/generated/${file}.ts`).to.equal(
        true,
      );
  });

  it("a gateway started with gateway.yaml's chain loads no ajv: it compiles nothing at run time", () => {
    const script = `
      const { startTestGateway, testConfig } = require('./test/helpers/gateway.ts');
      const { plugins } = require('yaml').parse(require('fs').readFileSync('gateway.yaml', 'utf8'));
      (async () => {
        const gw = await startTestGateway(testConfig({ plugins }, { GATEWAY_ADMIN_KEY: 'test-admin-key-9a822c8a8c6e928b1ccd4197' }));
        // Only the small helpers the generated code calls (string length, deep equality).
        const ajv = Object.keys(require.cache).filter((k) => k.includes('/node_modules/ajv/') && !k.includes('/ajv/dist/runtime/'));
        await gw.stop();
        process.stdout.write(JSON.stringify(ajv));
      })();`;
    const out = execFileSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], {
      cwd: join(__dirname, '..', '..'),
      encoding: 'utf8',
    });
    expect(JSON.parse(out.trim().split('\n').pop() as string)).to.deep.equal([]);
  });

  it('the YAML parser is loaded for the moment: once the config is read, none of it stays in the module cache', () => {
    const script = `
      const { loadConfigFile } = require('./src/config/load.ts');
      const config = loadConfigFile('gateway.yaml', { GATEWAY_ADMIN_KEY: 'test-admin-key-9a822c8a8c6e928b1ccd4197' });
      const yaml = Object.keys(require.cache).filter((k) => k.includes('/node_modules/yaml/'));
      process.stdout.write(JSON.stringify({ plugins: config.plugins.length, yaml }));`;
    const out = execFileSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], {
      cwd: join(__dirname, '..', '..'),
      encoding: 'utf8',
    });
    const r = JSON.parse(out.trim().split('\n').pop() as string) as { plugins: number; yaml: string[] };
    expect(r.plugins, 'the config was read').to.be.greaterThan(3);
    expect(r.yaml).to.deep.equal([]);
  });
});
