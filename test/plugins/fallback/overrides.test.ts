import { expect } from 'chai';
import { createServer, type Server } from 'node:net';
import { startTestGateway, testConfig, postJson, type TestGateway } from '../../helpers/gateway';
import { MockUpstream, openaiFixtures, sendJson } from '../../helpers/mock-upstream';
import { checkApiBase } from '../../../plugins/fallback/ssrf';

describe('per-request overrides are safe', () => {
  let listener: Server;
  let port: number;
  let connections = 0;
  let up: MockUpstream;
  let gw: TestGateway;
  before(async () => {
    // A loopback listener that must never be reached by any refused address.
    listener = createServer((s) => {
      connections++;
      s.destroy();
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', () => r()));
    port = (listener.address() as { port: number }).port;
    up = await new MockUpstream().start();
    up.handler = (_r, res) => sendJson(res, 200, openaiFixtures.completion('ok'));
    gw = await startTestGateway(
      testConfig({
        providers: [{ name: 'up', type: 'openai', api_base: `${up.url}/v1`, api_key: 'sk-operator-secret' }],
        models: [{ id: 'm', deployments: [{ provider: 'up', model: 'gpt' }] }],
        plugins: [
          {
            fallback: {
              num_retries: 0,
              overrides: {
                allow: true,
                api_base_allowlist: [
                  '127.0.0.1',
                  'localhost',
                  '0x7f.1',
                  '2130706433',
                  '169.254.169.254',
                  'metadata.google.internal',
                  'api.example.com',
                  '10.0.0.1',
                  '[::1]',
                  '::1',
                  '[::ffff:127.0.0.1]',
                  '::ffff:7f00:1',
                ],
              },
            },
          },
          'routing',
        ],
      }),
    );
  });
  after(async () => {
    await gw.stop();
    await up.stop();
    listener.close();
  });

  const FORMS = () => [
    `http://127.0.0.1:${port}/v1`,
    `http://localhost:${port}/v1`,
    `http://2130706433:${port}/v1`,
    `http://0x7f000001:${port}/v1`,
    `http://0x7f.1:${port}/v1`,
    `http://0177.0.0.1:${port}/v1`,
    `http://127.1:${port}/v1`,
    `http://127.0.0.1.:${port}/v1`,
    `http://[::1]:${port}/v1`,
    `http://[::ffff:127.0.0.1]:${port}/v1`,
    `http://[::ffff:7f00:1]:${port}/v1`,
    `http://[0:0:0:0:0:ffff:127.0.0.1]:${port}/v1`,
    'http://169.254.169.254/latest/meta-data/',
    'http://[::ffff:169.254.169.254]/latest/meta-data/',
    'http://2852039166/latest/meta-data/',
    'http://metadata.google.internal/computeMetadata/v1/',
    'http://10.0.0.1/v1',
    'http://192.168.1.1/v1',
    'http://172.16.0.1/v1',
    'http://100.100.100.200/latest/meta-data',
    'http://0.0.0.0:80/v1',
    `file:///etc/passwd`,
    `gopher://127.0.0.1:${port}/_`,
    `ftp://127.0.0.1:${port}/`,
    `http://user:pass@api.example.com/v1`,
    'http://not-on-the-allowlist.example/v1',
    `http://[fe80::1]:${port}/v1`,
    `http://[fd00:ec2::254]/latest`,
  ];

  it('refuses every address form of the SSRF matrix (28 forms) with 403, and nothing connects', async () => {
    const forms = FORMS();
    expect(forms.length).to.be.at.least(20);
    for (const api_base of forms) {
      const res = await postJson(`${gw.url}/v1/chat/completions`, {
        model: 'm',
        api_base,
        api_key: 'sk-client',
        messages: [{ role: 'user', content: 'x' }],
      });
      const body = (await res.json()) as { error: { code: string } };
      expect(res.status, api_base).to.equal(403);
      expect(body.error.code, api_base).to.equal('api_base_refused');
    }
    expect(connections).to.equal(0);
  });

  it('resolves names and checks every address (a name resolving to loopback is refused)', async () => {
    const policy = { allow: ['internal.example'], allowPrivate: [], self: { host: '127.0.0.1', port: 8080 } };
    const fakeLookup = (async () => [
      { address: '93.184.216.34', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ]) as never;
    await checkApiBase('https://internal.example/v1', policy, fakeLookup).then(
      () => expect.fail('should refuse'),
      (e: { code: string }) => expect(e.code).to.equal('api_base_refused'),
    );
    const ok = await checkApiBase('https://internal.example/v1', policy, (async () => [
      { address: '93.184.216.34', family: 4 },
    ]) as never);
    expect(ok.address).to.equal('93.184.216.34');
  });

  it("an allowed api_base gets the request's own key, never the operator's, on the checked (pinned) address", async () => {
    const own = await new MockUpstream().start();
    own.handler = (_r, res) => sendJson(res, 200, openaiFixtures.completion('from own'));
    const g2 = await startTestGateway(
      testConfig({
        providers: [{ name: 'up', type: 'openai', api_base: `${up.url}/v1`, api_key: 'sk-operator-secret' }],
        models: [{ id: 'm', deployments: [{ provider: 'up', model: 'gpt' }] }],
        plugins: [
          {
            fallback: {
              overrides: { allow: true, api_base_allowlist: ['localhost'], allow_private: ['127.0.0.1/32'] },
            },
          },
          'routing',
        ],
      }),
    );
    try {
      const base = own.url.replace('127.0.0.1', 'localhost');
      const missingKey = await postJson(`${g2.url}/v1/chat/completions`, {
        model: 'm',
        api_base: `${base}/v1`,
        messages: [{ role: 'user', content: 'x' }],
      });
      expect(missingKey.status).to.equal(400);
      expect(((await missingKey.json()) as { error: { code: string } }).error.code).to.equal('api_key_required');
      const res = await postJson(`${g2.url}/v1/chat/completions`, {
        model: 'm',
        api_base: `${base}/v1`,
        api_key: 'sk-client-own',
        deployment_id: 'their-model',
        messages: [{ role: 'user', content: 'x' }],
      });
      expect(res.status).to.equal(200);
      expect(own.requests[0].headers.authorization).to.equal('Bearer sk-client-own');
      expect((own.requests[0].json as { model: string }).model).to.equal('their-model');
      expect(JSON.stringify(own.requests)).to.not.include('sk-operator-secret');
    } finally {
      await g2.stop();
      await own.stop();
    }
  });

  it("a request's api_version wins over the deployment's own (Azure)", async () => {
    const az = await new MockUpstream().start();
    az.handler = (_r, res) => sendJson(res, 200, openaiFixtures.completion('ok'));
    const g4 = await startTestGateway(
      testConfig({
        providers: [{ name: 'az', type: 'azure', api_base: az.url, api_key: 'k' }],
        models: [{ id: 'm', deployments: [{ provider: 'az', model: 'dep', options: { api_version: '2024-02-01' } }] }],
        plugins: [{ fallback: { overrides: { allow: true } } }, 'routing'],
      }),
    );
    try {
      await postJson(`${g4.url}/v1/chat/completions`, { model: 'm', messages: [{ role: 'user', content: 'x' }] });
      await postJson(`${g4.url}/v1/chat/completions`, {
        model: 'm',
        api_version: '2025-01-01-preview',
        deployment_id: 'other-dep',
        messages: [{ role: 'user', content: 'x' }],
      });
      expect(az.requests.map((r) => r.path)).to.deep.equal([
        '/openai/deployments/dep/chat/completions?api-version=2024-02-01',
        '/openai/deployments/other-dep/chat/completions?api-version=2025-01-01-preview',
      ]);
    } finally {
      await g4.stop();
      await az.stop();
    }
  });

  it('overrides are refused unless the operator allows them', async () => {
    const g3 = await startTestGateway(
      testConfig({
        providers: [{ name: 'up', type: 'openai', api_base: `${up.url}/v1` }],
        models: [{ id: 'm', deployments: [{ provider: 'up', model: 'gpt' }] }],
        plugins: ['fallback', 'routing'],
      }),
    );
    try {
      for (const o of [
        { api_base: 'https://api.example.com' },
        { api_key: 'k' },
        { model_list: [] },
        { deployment_id: 'd' },
        { api_version: '1' },
      ]) {
        const res = await postJson(`${g3.url}/v1/chat/completions`, {
          model: 'm',
          ...o,
          messages: [{ role: 'user', content: 'x' }],
        });
        expect(res.status, JSON.stringify(o)).to.equal(403);
        expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('override_not_allowed');
      }
    } finally {
      await g3.stop();
    }
  });

  it('header overrides cannot set hop-by-hop, Host, Content-Length, Transfer-Encoding or auth headers, nor CR/LF values', async () => {
    for (const h of [
      { Host: 'evil' },
      { 'Content-Length': '1' },
      { 'Transfer-Encoding': 'chunked' },
      { Connection: 'close' },
      { Authorization: 'Bearer x' },
      { 'x-api-key': 'k' },
      { 'X-Ok': 'a\r\nInjected: 1' },
      { 'bad name': 'x' },
    ]) {
      const res = await postJson(`${gw.url}/v1/chat/completions`, {
        model: 'm',
        headers: h,
        messages: [{ role: 'user', content: 'x' }],
      });
      expect(res.status, JSON.stringify(h)).to.equal(400);
    }
    const n = up.requests.length;
    const res = await postJson(`${gw.url}/v1/chat/completions`, {
      model: 'm',
      headers: { 'X-Trace-Me': '1' },
      extra_headers: { 'X-Other': '2' },
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(res.status).to.equal(200);
    expect(up.requests[n].headers).to.include({
      'x-trace-me': '1',
      'x-other': '2',
      authorization: 'Bearer sk-operator-secret',
    });
  });
});
