import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { MockUpstream } from '../../src/testing/mock-upstream';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../helpers/accounts';
import { postJson } from '../helpers/gateway';
import { freshPostgresUrl, POSTGRES_URL } from '../helpers/postgres';
import { startGatewayProcess, type GatewayProcess } from '../helpers/process';

const REPO = resolve(__dirname, '../..');
const EXAMPLES = ['provider-acme', 'strategy-cheapest-fit', 'limiter-shared'];
function run(cmd: string, args: string[], cwd: string): string {
  try {
    return execFileSync(cmd, args, { cwd, stdio: 'pipe', encoding: 'utf8' });
  } catch (e) {
    const x = e as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${x.message}\n${x.stdout ?? ''}\n${x.stderr ?? ''}`);
  }
}

/**
 * The three example plugins, as an author outside the repo would ship them: each is type-checked
 * and built against the gateway's emitted `.d.ts` (`model-gateway/plugin`), `npm pack`ed, and
 * installed into a fresh project beside the gateway package; the gateway then runs from that
 * project's node_modules (its dist, as `npm start` runs it) with the three plugins in its YAML.
 */
describe('example plugins, packed and installed outside the repo', function () {
  this.timeout(300_000);
  let tmp: string;
  let project: string;
  let acme: MockUpstream;
  const gateways: GatewayProcess[] = [];

  before(async function () {
    if (!POSTGRES_URL) {
      console.warn('    ! GATEWAY_TEST_POSTGRES_URL is not set; the example plugins test (two replicas) did not run');
      this.skip();
    }
    run(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], REPO);
    tmp = mkdtempSync(join(tmpdir(), 'gw-examples-'));
    const deps: Record<string, string> = { 'model-gateway': `file:${REPO}` };
    for (const name of EXAMPLES) {
      const stage = join(tmp, 'stage', name);
      cpSync(join(REPO, 'examples', name), stage, {
        recursive: true,
        filter: (src) => !/node_modules|dist/.test(src.slice(REPO.length)),
      });
      mkdirSync(join(stage, 'node_modules'));
      symlinkSync(REPO, join(stage, 'node_modules', 'model-gateway'), 'dir');
      run(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', '.'], stage);
      run('npm', ['pack', '--ignore-scripts', '--pack-destination', tmp], stage);
    }
    for (const tgz of readdirSync(tmp).filter((f) => f.endsWith('.tgz')))
      deps[tgz.replace(/-1\.0\.0\.tgz$/, '')] = `file:${join(tmp, tgz)}`;
    project = join(tmp, 'project');
    mkdirSync(project);
    writeFileSync(
      join(project, 'package.json'),
      JSON.stringify({ name: 'operator-project', private: true, dependencies: deps }),
    );
    run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--ignore-scripts'], project);
    acme = await new MockUpstream().start();
  });

  after(async () => {
    for (const g of gateways) await g.stop();
    await acme?.stop();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('installs each as its own package with compiled JS and type declarations', () => {
    for (const name of ['gateway-provider-acme', 'gateway-strategy-cheapest-fit', 'gateway-limiter-shared']) {
      expect(readdirSync(join(project, 'node_modules', name, 'dist')).sort()).to.include.members([
        'index.js',
        'index.d.ts',
      ]);
    }
  });

  it('runs two replicas with them: the acme adapter, the cheapest-fit strategy, and one limit across both', async () => {
    acme.handler = (req, res) => {
      const b = req.json as {
        engine: string;
        turns: Array<{ speaker: string; text: string }>;
        budget?: number;
        stream: boolean;
      };
      const text = `acme says ${b.turns.at(-1)?.text} (${b.engine}, ${req.headers['x-acme-key']})`;
      if (b.stream) {
        res.writeHead(200, { 'content-type': 'application/x-ndjson' });
        for (const piece of text.split(' ')) res.write(`${JSON.stringify({ piece: `${piece} ` })}\n`);
        res.end(`${JSON.stringify({ stop: 'done', meter: { read: 7, written: 9 } })}\n`);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ result: { text, stop: 'done' }, meter: { read: 7, written: 5 } }));
    };
    const config = {
      server: { host: '127.0.0.1', port: 0, log_level: 'info' },
      store: { driver: 'postgres', url: await freshPostgresUrl() },
      providers: [
        { name: 'acme', type: 'acme', api_base: acme.url, api_key: 'acme-test-key' },
        { name: 'mock', type: 'mock' },
      ],
      models: [
        {
          id: 'acme/text',
          pricing: { prompt: 0.000001, completion: 0.000001 },
          deployments: [{ provider: 'acme', model: 'acme-large' }],
        },
        {
          id: 'mock/fit',
          pricing: { prompt: 0.000001, completion: 0.000001 },
          routing: { strategy: 'cheapest-fit' },
          deployments: [
            { provider: 'mock', model: 'tiny-cheap', cost: 1, options: { context_length: 40 } },
            { provider: 'mock', model: 'big-dear', cost: 5, options: { context_length: 100000 } },
          ],
        },
      ],
      plugins: [
        'auth',
        // A day's window: its counters are aligned to the clock, and a minute's boundary crossed between the requests
        // counted below (one run in a few dozen) started the count again.
        { use: 'gateway-limiter-shared', config: { limit: 5, window_seconds: 86_400 } },
        { use: 'gateway-provider-acme' },
        { use: 'gateway-strategy-cheapest-fit' },
        'routing',
      ],
    };
    const cli = join(project, 'node_modules', 'model-gateway', 'dist', 'src', 'cli.js');
    const env = { GATEWAY_ADMIN_KEY: ADMIN_KEY };
    gateways.push(await startGatewayProcess(config, env, { cli, dir: project }));
    gateways.push(await startGatewayProcess(config, env, { cli, dir: project }));
    const [a, b] = gateways;
    const { key } = await makeAccountKey(a, { credits: 100 });
    const auth = { authorization: `Bearer ${key}` };

    // The acme adapter: plain and streamed, in the made-up wire format, with its key header.
    const plain = await postJson(
      `${a.url}/v1/chat/completions`,
      { model: 'acme/text', messages: [{ role: 'user', content: 'hello' }] },
      auth,
    );
    expect(plain.status).to.equal(200);
    const body = (await plain.json()) as {
      choices: Array<{ message: { content: string } }>;
      usage: { prompt_tokens: number };
    };
    expect(body.choices[0].message.content).to.equal('acme says hello (acme-large, acme-test-key)');
    expect(body.usage.prompt_tokens).to.equal(7);
    expect(acme.requests[0].json).to.deep.include({
      engine: 'acme-large',
      stream: false,
      turns: [{ speaker: 'human', text: 'hello' }],
    });
    const streamed = await postJson(
      `${b.url}/v1/chat/completions`,
      { model: 'acme/text', stream: true, messages: [{ role: 'user', content: 'hi' }] },
      auth,
    );
    const text = (await streamed.text())
      .split('\n\n')
      .filter((f) => f.startsWith('data: {'))
      .map(
        (f) =>
          (JSON.parse(f.slice(6)) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ??
          '',
      )
      .join('');
    expect(text.trim()).to.equal('acme says hi (acme-large, acme-test-key)');

    // The strategy: a short prompt goes to the cheap deployment, a long one to the one it fits.
    const short = await postJson(
      `${a.url}/v1/chat/completions`,
      { model: 'mock/fit', messages: [{ role: 'user', content: 'hi' }] },
      auth,
    );
    expect(short.headers.get('x-gateway-deployment')).to.equal('mock/tiny-cheap');
    const long = await postJson(
      `${b.url}/v1/chat/completions`,
      { model: 'mock/fit', messages: [{ role: 'user', content: 'word '.repeat(60) }] },
      auth,
    );
    expect(long.headers.get('x-gateway-deployment')).to.equal('mock/big-dear');

    // The limiter: 4 requests so far; 8 more spread over both replicas -> 1 more admitted in all.
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const g = i % 2 === 0 ? a : b;
      const r = await postJson(
        `${g.url}/v1/chat/completions`,
        { model: 'mock/fit', messages: [{ role: 'user', content: 'hi' }] },
        auth,
      );
      statuses.push(r.status);
      if (r.status === 429) {
        expect(Number(r.headers.get('retry-after'))).to.be.within(1, 86_400);
        expect(((await r.json()) as { error: { code: string } }).error.code).to.equal('key_request_limit');
      } else await r.text();
    }
    expect(statuses.filter((s) => s === 200)).to.have.length(1);
    expect(statuses.filter((s) => s === 429)).to.have.length(7);
    // Another key has its own count.
    const other = await makeAccountKey(b, { credits: 10 });
    expect(
      (
        await postJson(
          `${a.url}/v1/chat/completions`,
          { model: 'mock/fit', messages: [{ role: 'user', content: 'hi' }] },
          { authorization: `Bearer ${other.key}` },
        )
      ).status,
    ).to.equal(200);
    expect((await adminCall(a, 'GET', '/v1/accounts')).status).to.equal(200);
  });
});
