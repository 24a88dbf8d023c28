// The container image, built from the repository's Dockerfile with podman and run as an operator would: a mounted
// gateway.yaml, a read-only root filesystem with data under the /data volume, no capabilities. Then the two-replica
// set-up of deploy/compose.yaml, its gateway services run with podman against one PostgreSQL and one Redis.
//
// Networking: the containers use the host's network (--network host) and listen on 127.0.0.1 only (GATEWAY_HOST),
// so every byte stays on loopback: the mock upstream the gateway calls is a loopback server of this test, and the
// replicas use the host's PostgreSQL and Redis on 127.0.0.1 (GATEWAY_TEST_POSTGRES_URL, GATEWAY_TEST_REDIS_URL), as
// the images of postgres and redis that compose.yaml names need a registry this machine cannot reach.
//
// Slow: the first build compiles better-sqlite3 and takes minutes (the base image, its rootfs and the build's layers
// are cached under ~/.cache/model-gateway and reused). Skips only when podman cannot run here, saying why.
import { expect } from 'chai';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { MockUpstream, openaiFixtures, sendJson } from '../helpers/mock-upstream';
import { freshPostgresUrl, POSTGRES_URL } from '../helpers/postgres';
import { execFileSync } from 'node:child_process';
import { parseAllDocuments, stringify } from 'yaml';
import { buildImage, ensureHelm, IMAGE, imageSize, podman, podmanUnavailable, removeContainers, ROOT } from './podman';

const REDIS_URL = process.env.GATEWAY_TEST_REDIS_URL || undefined;
const ADMIN = `sk-admin-container-test-${randomBytes(12).toString('hex')}`;

async function freePort(): Promise<number> {
  return new Promise((done) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => done(port));
    });
  });
}

async function waitReady(url: string, name: string, ms = 60_000): Promise<void> {
  const until = Date.now() + ms;
  let last = '';
  while (Date.now() < until) {
    try {
      const r = await fetch(`${url}/ready`);
      if (r.status === 200) return;
      last = `${r.status} ${await r.text()}`;
    } catch (e) {
      last = (e as Error).message;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const logs = await podman(['logs', '--tail', '30', name]).catch((e: Error) => e.message);
  throw new Error(`${name}: /ready not 200 within ${ms} ms (last: ${last})\n${logs}`);
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- answers are read field by field and checked
type Json = any;

async function call(url: string, path: string, key: string, body?: unknown): Promise<{ status: number; json: Json }> {
  const r = await fetch(`${url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: r.status, json };
}

/** An account with `credits` and a key of it, made through the admin API of the gateway at `url`. */
async function accountAndKey(url: string, credits: number): Promise<{ id: string; key: string }> {
  const a = await call(url, '/v1/accounts', ADMIN, { name: `acct-${Date.now()}`, credits });
  expect(a.status, JSON.stringify(a.json)).to.equal(201);
  const k = await call(url, '/v1/keys', ADMIN, { name: 'container-test', account_id: a.json.data.id });
  expect(k.status, JSON.stringify(k.json)).to.equal(201);
  return { id: a.json.data.id, key: k.json.key };
}

let unavailable: string | undefined;
let built = false;

describe('container image (podman)', function () {
  this.timeout(30 * 60_000);
  const names: string[] = [];
  const dirs: string[] = [];

  before(async function () {
    unavailable = await podmanUnavailable();
    if (unavailable) {
      process.stdout.write(`      SKIPPED: podman cannot run on this machine: ${unavailable}\n`);
      this.skip();
    }
    const t0 = Date.now();
    await buildImage();
    built = true;
    const mb = (await imageSize()) / 1e6;
    process.stdout.write(
      `      image ${IMAGE} built in ${((Date.now() - t0) / 1000).toFixed(0)} s, ${mb.toFixed(0)} MB\n`,
    );
  });

  after(async () => {
    await removeContainers(names);
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  describe('one container', () => {
    const upstream = new MockUpstream();
    let url = '';
    let dataDir = '';
    const name = `gw-test-${process.pid}`;

    before(async function () {
      if (!built) this.skip();
      await upstream.start();
      upstream.handler = (_req, res) =>
        sendJson(res, 200, openaiFixtures.completion('Hello from the loopback upstream'));
      // an operator's own gateway.yaml, mounted read-only over the image's default
      const dir = mkdtempSync(join(tmpdir(), 'gw-container-'));
      dirs.push(dir);
      dataDir = join(dir, 'data');
      const cfg = readFileSync(join(ROOT, 'deploy/gateway.container.yaml'), 'utf8')
        .replace(
          /^providers:\n/m,
          `providers:\n  - name: upstream\n    type: openai\n    api_base: ${upstream.url}/v1\n    api_key: upstream-key\n`,
        )
        .replace(
          /^models:\n/m,
          'models:\n  - id: upstream/gpt-4o-mini\n    owned_by: upstream\n    created: 1715367049\n' +
            '    pricing: { prompt: 0.000001, completion: 0.000002 }\n' +
            '    deployments: [{ provider: upstream, model: gpt-4o-mini }]\n',
        )
        .replace('chunk_delay_ms: 20', 'chunk_delay_ms: 40');
      writeFileSync(join(dir, 'gateway.yaml'), cfg);
      // the data volume: a host folder the image's user (1000) owns
      mkdirSync(dataDir);
      chownSync(dataDir, 1000, 1000);
      chmodSync(dir, 0o755);
      const port = await freePort();
      url = `http://127.0.0.1:${port}`;
      names.push(name);
      await podman([
        'run',
        '-d',
        '--name',
        name,
        '--network',
        'host',
        '--read-only',
        '--cap-drop',
        'ALL',
        '--security-opt',
        'no-new-privileges',
        '-v',
        `${join(dir, 'gateway.yaml')}:/etc/gateway/gateway.yaml:ro`,
        '-v',
        `${dataDir}:/data`,
        '-e',
        'GATEWAY_HOST=127.0.0.1',
        '-e',
        `PORT=${port}`,
        '-e',
        `GATEWAY_ADMIN_KEY=${ADMIN}`,
        IMAGE,
      ]);
      await waitReady(url, name);
    });

    after(async () => {
      await upstream.stop();
    });

    it('answers a chat completion through the loopback upstream, and /ready and /health', async () => {
      const { key } = await accountAndKey(url, 5);
      const r = await call(url, '/v1/chat/completions', key, {
        model: 'upstream/gpt-4o-mini',
        messages: [{ role: 'user', content: 'Hello!' }],
      });
      expect(r.status, JSON.stringify(r.json)).to.equal(200);
      expect(r.json.choices[0].message.content).to.equal('Hello from the loopback upstream');
      expect(r.json.usage.cost).to.be.greaterThan(0);
      expect(upstream.requests.at(-1)?.headers.authorization).to.equal('Bearer upstream-key');
      const ready = await fetch(`${url}/ready`);
      expect(ready.status).to.equal(200);
      expect(await ready.json()).to.include({ status: 'ready', store: 'sqlite' });
      expect((await fetch(`${url}/health`)).status).to.equal(200);
      // the console is built in and served (the image's build bundled it)
      const consolePage = await fetch(`${url}/console`);
      expect(consolePage.status).to.equal(200);
      expect(await consolePage.text()).to.match(/<html/i);
    });

    it("passes the image's own HEALTHCHECK (node's fetch of /ready)", async () => {
      const hc = JSON.parse(await podman(['image', 'inspect', IMAGE, '--format', '{{json .Config.Healthcheck}}']));
      expect(hc.Test.join(' ')).to.include('/ready');
      // podman runs the check inside the container (no systemd timer on this machine: it is run by hand here)
      await podman(['healthcheck', 'run', name]);
    });

    it('runs as a non-root user, node as PID 1, with a read-only root filesystem and data under /data', async () => {
      const status = await podman(['exec', name, 'cat', '/proc/1/status']);
      expect(/^Uid:\s+(\d+)/m.exec(status)?.[1]).to.equal('1000');
      expect(/^Name:\s+(\S+)/m.exec(status)?.[1]).to.equal('node');
      const inspect = JSON.parse(await podman(['inspect', name]))[0];
      expect(inspect.Config.User).to.equal('1000:1000');
      const touch = await podman(['exec', name, 'sh', '-c', 'touch /app/x 2>&1 || echo refused']);
      expect(touch).to.match(/Read-only file system[\s\S]*refused/);
      expect(readdirSync(dataDir)).to.include('gateway.db');
      expect(existsSync(join(dataDir, 'gateway.db'))).to.equal(true);
    });

    it('SIGTERM during a stream: the stream ends cleanly within the grace, /ready turns 503, exit 0', async () => {
      const { key } = await accountAndKey(url, 5);
      const words = Array.from({ length: 40 }, (_, i) => `w${i}`).join(' '); // ~80 tokens at 40 ms: ~3 s
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'mock/streaming-slow',
          stream: true,
          messages: [{ role: 'user', content: words }],
        }),
      });
      expect(res.status).to.equal(200);
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      while (!text.includes('"content"')) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      const t0 = Date.now();
      await podman(['kill', '--signal', 'TERM', name]);
      await new Promise((r) => setTimeout(r, 300));
      const during = await fetch(`${url}/ready`).then(
        (r) => r.status,
        () => 0,
      );
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      const frames = text
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6));
      expect(frames.at(-1)).to.equal('[DONE]');
      expect(text).to.not.include('shutting_down');
      const finish = frames.filter((f) => f.includes('"finish_reason":"stop"'));
      expect(finish.length, 'a finish_reason stop chunk').to.be.greaterThan(0);
      const content = frames
        .filter((f) => f !== '[DONE]')
        .map((f) => JSON.parse(f).choices?.[0]?.delta?.content ?? '')
        .join('');
      expect(content).to.equal(`Mock answer: ${words}`);
      expect(during, '/ready while draining').to.equal(503);
      const code = (await podman(['wait', name], 60_000)).trim();
      expect(code).to.equal('0');
      expect(Date.now() - t0).to.be.lessThan(10_000 + 5_000);
      const logs = await podman(['logs', name]);
      expect(logs).to.include('shutting down');
      expect(logs).to.include('"msg":"stopped"');
    });
  });

  describe("compose.yaml's two gateway replicas on PostgreSQL and Redis", () => {
    const urls: string[] = [];

    before(async function () {
      if (!built) this.skip();
      if (!POSTGRES_URL || !REDIS_URL) {
        process.stdout.write(
          '      SKIPPED: set GATEWAY_TEST_POSTGRES_URL and GATEWAY_TEST_REDIS_URL for the two-replica run\n',
        );
        this.skip();
      }
      const compose = parse(readFileSync(join(ROOT, 'deploy/compose.yaml'), 'utf8'));
      const gateways = Object.keys(compose.services).filter((s) => s.startsWith('gateway-'));
      expect(gateways).to.deep.equal(['gateway-1', 'gateway-2']);
      const databaseUrl = await freshPostgresUrl();
      for (const svc of gateways) {
        const s = compose.services[svc];
        const port = await freePort();
        const name = `gw-test-${svc}-${process.pid}`;
        names.push(name);
        // compose's service, as podman flags: its environment, volumes, read-only root, tmpfs, capabilities
        const args = ['run', '-d', '--name', name, '--network', 'host'];
        const env: Record<string, string> = {
          ...s.environment,
          // in compose these name the postgres and redis services; here they are the host's, on loopback
          DATABASE_URL: databaseUrl,
          REDIS_URL,
          GATEWAY_ADMIN_KEY: ADMIN,
          GATEWAY_HOST: '127.0.0.1',
          PORT: String(port),
        };
        for (const [k, v] of Object.entries(env)) args.push('-e', `${k}=${v}`);
        for (const v of s.volumes as string[]) {
          const [src, ...rest] = v.split(':');
          args.push('-v', [src.startsWith('.') ? join(ROOT, 'deploy', src) : src, ...rest].join(':'));
        }
        if (s.read_only) args.push('--read-only');
        for (const t of s.tmpfs ?? []) args.push('--tmpfs', t);
        for (const c of s.cap_drop ?? []) args.push('--cap-drop', c);
        for (const o of s.security_opt ?? []) args.push('--security-opt', o);
        const grace = /^(\d+)s$/.exec(s.stop_grace_period ?? '')?.[1];
        if (grace) args.push('--stop-timeout', grace);
        args.push(IMAGE);
        await podman(args);
        urls.push(`http://127.0.0.1:${port}`);
      }
      await Promise.all(urls.map((u, i) => waitReady(u, names[names.length - urls.length + i])));
    });

    it('a key made through one replica works on the other', async () => {
      const { key } = await accountAndKey(urls[0], 1);
      const r = await call(urls[1], '/v1/chat/completions', key, {
        model: 'mock/gpt-4o-mini',
        messages: [{ role: 'user', content: 'Hello from replica two' }],
      });
      expect(r.status, JSON.stringify(r.json)).to.equal(200);
      expect(r.json.choices[0].message.content).to.equal('Mock answer: Hello from replica two');
      const ready = await (await fetch(`${urls[1]}/ready`)).json();
      expect(ready).to.include({ status: 'ready', store: 'postgres' });
    });

    it('a credit limit holds across both: concurrent requests on both replicas never spend past it', async () => {
      const body = {
        model: 'mock/gpt-4o-mini',
        max_tokens: 20,
        messages: [{ role: 'user', content: 'spend a little' }],
      };
      // what one request costs, on a roomy account
      const probe = await accountAndKey(urls[0], 1);
      const one = await call(urls[0], '/v1/chat/completions', probe.key, body);
      expect(one.status).to.equal(200);
      const cost = one.json.usage.cost as number;
      // Room for a dozen such requests: each first reserves its bound (prompt + max_tokens, several times its real
      // cost), so at least one fits at a time, and the 24 below (12 on each replica, all at once) together cost twice
      // the credit: some must be refused, whichever replica they reach.
      const credits = Number((cost * 12).toFixed(9));
      const { id, key } = await accountAndKey(urls[1], credits);
      const results = await Promise.all(
        Array.from({ length: 24 }, (_, i) => call(urls[i % 2], '/v1/chat/completions', key, body)),
      );
      const ok = results.filter((r) => r.status === 200);
      const refused = results.filter((r) => r.status === 402);
      const statuses = JSON.stringify(results.map((r) => r.status));
      expect(ok.length + refused.length, statuses).to.equal(24);
      expect(ok.length, JSON.stringify(refused[0]?.json)).to.be.greaterThan(0);
      expect(refused.length, statuses).to.be.greaterThan(0);
      expect(refused[0].json.error.code).to.equal('insufficient_account_credits');
      const spent = ok.reduce((s, r) => s + (r.json.usage.cost as number), 0);
      expect(spent).to.be.at.most(credits + 1e-9);
      // both replicas see the same balance and refuse alike once it is used up
      const a = await call(urls[0], `/v1/accounts/${id}`, ADMIN);
      const b = await call(urls[1], `/v1/accounts/${id}`, ADMIN);
      expect(a.json).to.deep.equal(b.json);
      expect(a.json.data.usage).to.be.closeTo(spent, 1e-9);
      for (const u of urls) {
        const big = await call(u, '/v1/chat/completions', key, { ...body, max_tokens: 4000 });
        expect(big.status).to.equal(402);
      }
    });
  });

  describe("the Helm chart's rendered Deployment, under podman kube play", () => {
    const release = `gw-kube-${process.pid}`;
    const secret = `gw-admin-${process.pid}`;
    const container = `${release}-pod-0-gateway`;
    let file = '';
    let url = '';

    before(async function () {
      if (!built) this.skip();
      const port = await freePort();
      url = `http://127.0.0.1:${port}`;
      const out = execFileSync(
        ensureHelm(),
        [
          'template',
          'kube',
          join(ROOT, 'deploy/helm/model-gateway'),
          '--set',
          `fullnameOverride=${release},image.repository=localhost/model-gateway,image.tag=test,image.pullPolicy=Never`,
          '--set',
          `adminKey.existingSecret=${secret}`,
          // podman's pod shares the host's network here: listen on loopback, on a free port
          '--set',
          'extraEnv[0].name=GATEWAY_HOST,extraEnv[0].value=127.0.0.1,extraEnv[1].name=PORT',
          '--set-string',
          `extraEnv[1].value=${port}`,
        ],
        { encoding: 'utf8' },
      );
      // what podman runs of a cluster's objects: the ConfigMap and the Deployment (its pod), as rendered, less the
      // container's ports (podman cannot publish ports on the host's network, and needs not to)
      const docs = parseAllDocuments(out)
        .map((d) => d.toJS())
        .filter((m) => m && ['ConfigMap', 'Deployment'].includes(m.kind));
      expect(docs).to.have.length(2);
      delete docs[1].spec.template.spec.containers[0].ports;
      const dir = mkdtempSync(join(tmpdir(), 'gw-kube-'));
      dirs.push(dir);
      file = join(dir, 'kube.yaml');
      writeFileSync(file, docs.map((d) => stringify(d)).join('---\n'));
      // the Secret adminKey.existingSecret names, as podman keeps one for kube play: its data, as JSON
      writeFileSync(join(dir, 'secret.json'), JSON.stringify({ 'admin-key': Buffer.from(ADMIN).toString('base64') }), {
        mode: 0o600,
      });
      await podman(['secret', 'create', secret, join(dir, 'secret.json')]);
      await podman(['kube', 'play', '--network', 'host', file], 180_000);
      await waitReady(url, container);
    });

    after(async () => {
      if (file) await podman(['kube', 'down', file]).catch(() => undefined);
      await podman(['secret', 'rm', secret]).catch(() => undefined);
    });

    it('serves with the admin key from the Secret, as user 1000 on a read-only root, SQLite in the emptyDir', async () => {
      const { key } = await accountAndKey(url, 1);
      const r = await call(url, '/v1/chat/completions', key, {
        model: 'mock/gpt-4o-mini',
        messages: [{ role: 'user', content: 'Hello, pod' }],
      });
      expect(r.status, JSON.stringify(r.json)).to.equal(200);
      expect(r.json.choices[0].message.content).to.equal('Mock answer: Hello, pod');
      expect((await podman(['exec', container, 'id', '-u'])).trim()).to.equal('1000');
      const touch = await podman(['exec', container, 'sh', '-c', 'touch /app/x 2>&1 || echo refused']);
      expect(touch).to.match(/Read-only file system[\s\S]*refused/);
      expect(await podman(['exec', container, 'ls', '/data'])).to.include('gateway.db');
      expect(await podman(['exec', container, 'cat', '/etc/gateway/gateway.yaml'])).to.include('driver: sqlite');
    });
  });
});
