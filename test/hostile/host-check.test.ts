import { expect } from 'chai';
import { request } from 'node:http';
import { startTestGateway, testConfig, type TestGateway } from '../helpers/gateway';

/** A request with any Host header (fetch will not send a Host other than the URL's). */
function get(gw: TestGateway, path: string, host: string): Promise<{ status: number; body: string }> {
  const { port } = new URL(gw.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** DNS rebinding (issue 43): a page elsewhere that makes its own name resolve to 127.0.0.1 still sends that name. */
describe('the Host allowlist against DNS rebinding', function () {
  this.timeout(20000);
  let loopback: TestGateway;
  let listed: TestGateway;
  before(async () => {
    loopback = await startTestGateway(testConfig({ plugins: ['metrics', 'routing'] }));
    listed = await startTestGateway(
      testConfig({
        server: { host: '127.0.0.1', port: 0, log_level: 'silent', allowed_hosts: ['gw.example.com', '*.corp.test'] },
      }),
    );
  });
  after(async () => {
    await loopback.stop();
    await listed.stop();
  });

  it('a loopback gateway answers loopback names only: /metrics and /v1/models refuse a rebound name', async () => {
    const { port } = new URL(loopback.url);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, 'LOCALHOST'])
      expect((await get(loopback, '/v1/models', host)).status, host).to.equal(200);
    for (const path of ['/metrics', '/v1/models', '/v1/chat/completions']) {
      const r = await get(loopback, path, `attacker.example:${port}`);
      expect(r.status, path).to.equal(403);
      expect(JSON.parse(r.body).error.code).to.equal('host_not_allowed');
    }
  });

  it('probes answer any Host; a configured list allows its names and subdomains only', async () => {
    expect((await get(loopback, '/health', 'attacker.example')).status).to.equal(200);
    expect((await get(loopback, '/ready', '10.1.2.3:8080')).status).to.equal(200);
    expect((await get(listed, '/v1/models', 'gw.example.com')).status).to.equal(200);
    expect((await get(listed, '/v1/models', 'a.corp.test:443')).status).to.equal(200);
    expect((await get(listed, '/v1/models', 'corp.test')).status).to.equal(403);
    expect((await get(listed, '/v1/models', 'gw.example.com.attacker.example')).status).to.equal(403);
    expect((await get(listed, '/v1/models', '127.0.0.1')).status).to.equal(403);
  });
});
