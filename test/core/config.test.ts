import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ConfigError, parseConfig } from '../../src/config/load';
import { interpolate } from '../../src/config/interpolate';

const run = promisify(execFile);

const MINIMAL = `
providers:
  - { name: mock, type: mock }
models:
  - id: a/b
    deployments: [{ provider: mock, model: m }]
`;

function problemsOf(yaml: string, env: NodeJS.ProcessEnv = {}): Array<{ pointer: string; message: string }> {
  try {
    parseConfig(yaml, { env });
  } catch (e) {
    expect(e).to.be.instanceOf(ConfigError);
    return (e as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('config', () => {
  it('applies defaults and freezes the result', () => {
    const c = parseConfig(MINIMAL, { env: {} });
    expect(c.server).to.include({ host: '127.0.0.1', port: 8080, body_limit: '20mb', default_request_timeout_s: 600 });
    expect(c.store.driver).to.equal('sqlite');
    expect(c.models[0]).to.include({ owned_by: 'gateway', context_length: 128000 });
    expect(c.models[0].deployments[0].weight).to.equal(1);
    expect(c.plugins).to.deep.equal([{ name: 'routing', config: {} }]);
    expect(Object.isFrozen(c.models[0].deployments[0])).to.equal(true);
  });

  it('interpolates ${VAR} and ${VAR:-default} in values, never in keys, and $${ stays literal', () => {
    const env = { KEY: 'sk-from-env', EMPTY: '' };
    expect(
      interpolate({ a: '${KEY}', b: 'x-${MISSING:-dflt}-y', c: '${EMPTY:-fallback}', d: '$${KEY}', '${KEY}': 1 }, env),
    ).to.deep.equal({
      a: 'sk-from-env',
      b: 'x-dflt-y',
      c: 'fallback',
      d: '${KEY}',
      '${KEY}': 1,
    });
    const c = parseConfig(
      `${MINIMAL}\n# comment\n`.replace('type: mock }', 'type: mock, api_key: "${UPSTREAM_KEY:-none}" }'),
      { env: {} },
    );
    expect(c.providers[0].api_key).to.equal('none');
  });

  it('names an unset variable without default by its JSON pointer', () => {
    const p = problemsOf(MINIMAL.replace('type: mock }', 'type: mock, api_key: "${NOPE}" }'));
    expect(p).to.deep.include({
      pointer: '/providers/0/api_key',
      message: 'environment variable NOPE is not set and has no default',
    });
  });

  it('reports every problem at once, each with its JSON pointer: unknown keys, types, references, duplicates', () => {
    const p = problemsOf(`
server: { port: "eighty", colour: blue }
store: { driver: postgres }
providers:
  - { name: mock, type: mock }
  - { name: mock, type: nosuch }
models:
  - id: a
    deployments: [{ provider: ghost, model: m }]
  - id: a
    pricing: { prompt: -1 }
    deployments: [{ provider: mock, model: m }]
plugins: [routing, routing]
`);
    const pointers = p.map((x) => x.pointer);
    expect(pointers).to.include.members(['/server/port', '/server/colour', '/store', '/models/1/pricing/prompt']);
    expect(p.find((x) => x.pointer === '/server/colour')?.message).to.equal('unknown key');
    expect(p.find((x) => x.pointer === '/store')?.message).to.match(/url/);
  });

  it('cross-checks references once the shape is valid', () => {
    const p = problemsOf(`
providers:
  - { name: mock, type: mock }
  - { name: mock, type: nosuch }
  - { name: az, type: azure }
models:
  - id: a
    deployments: [{ provider: ghost, model: m }]
  - id: a
    deployments: [{ provider: mock, model: m }]
plugins: [routing, routing]
`);
    expect(p).to.deep.include({ pointer: '/providers/1/name', message: "duplicate provider name 'mock'" });
    expect(p.find((x) => x.pointer === '/providers/2/api_base')?.message).to.match(/azure provider needs/);
    expect(p.find((x) => x.pointer === '/providers/1/type')?.message).to.match(
      /unknown provider type 'nosuch'; known types: .*openai.*mock/,
    );
    expect(p).to.deep.include({ pointer: '/models/0/deployments/0/provider', message: "no provider named 'ghost'" });
    expect(p).to.deep.include({ pointer: '/models/1/id', message: "duplicate model id 'a'" });
    expect(p).to.deep.include({ pointer: '/plugins/1', message: "plugin 'routing' is listed twice" });
  });

  it('PORT overrides server.port; a bad PORT is a problem', () => {
    expect(parseConfig(MINIMAL, { env: { PORT: '9123' } }).server.port).to.equal(9123);
    expect(problemsOf(MINIMAL, { PORT: 'x' })).to.deep.include({
      pointer: '/server/port',
      message: 'PORT=x is not a port number',
    });
  });

  it('reports YAML syntax errors', () => {
    expect(problemsOf('models: [unclosed')[0].message).to.match(/^YAML:/);
  });

  describe('gateway check', function () {
    this.timeout(60000);
    const dir = mkdtempSync(join(tmpdir(), 'gw-check-'));

    it('accepts the root gateway.yaml', async () => {
      const { stdout } = await run(
        process.execPath,
        ['--require', 'tsx/cjs', 'src/cli.ts', 'check', '--config', 'gateway.yaml'],
        { env: { ...process.env, GATEWAY_CONFIG: '' } },
      );
      expect(stdout).to.match(/gateway\.yaml: OK/);
    });

    it('prints every problem with its pointer and exits non-zero; start refuses the same file', async () => {
      const file = join(dir, 'bad.yaml');
      writeFileSync(file, `${MINIMAL}\nplugins: [routing, nosuchplugin]\nextra: 1\n`);
      for (const cmd of ['check', 'start']) {
        const err = await run(process.execPath, ['--require', 'tsx/cjs', 'src/cli.ts', cmd, '--config', file]).then(
          () => null,
          (e: { code: number; stderr: string }) => e,
        );
        expect(err, cmd).to.not.equal(null);
        expect(err!.code).to.equal(1);
        expect(err!.stderr).to.include('/extra: unknown key');
      }
      const p = join(dir, 'badplugin.yaml');
      writeFileSync(p, `${MINIMAL}\nplugins: [nosuchplugin, routing]\n`);
      const e2 = await run(process.execPath, ['--require', 'tsx/cjs', 'src/cli.ts', 'check', '--config', p]).catch(
        (e: { stderr: string }) => e,
      );
      expect((e2 as { stderr: string }).stderr).to.match(
        /\/plugins\/0: unknown plugin 'nosuchplugin'; built-in plugins: .*routing/,
      );
    });
  });
});
