import { expect } from 'chai';
import { startTestGateway, testConfig, type TestGateway } from '../helpers/gateway';
import { ADMIN_KEY } from '../helpers/accounts';

/**
 * server.trust_proxy (issue 43): off by default, X-Forwarded-For is the client's own word and names nobody (a client
 * cannot dodge the failed-authentication throttle by inventing addresses); on, its last entry (the address the
 * trusted proxy saw) is the client.
 */
describe('server.trust_proxy decides whether X-Forwarded-For names the client', function () {
  this.timeout(20000);
  const start = (trust: boolean) =>
    startTestGateway(
      testConfig(
        {
          server: { host: '127.0.0.1', port: 0, log_level: 'silent', trust_proxy: trust },
          plugins: ['auth', { limits: { auth_failures: { max: 3, window_ms: 60000 } } }, 'routing'],
        },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
  const attempt = (gw: TestGateway, forwarded: string) =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: 'Bearer sk-wrong-key-0000000000',
        'x-forwarded-for': forwarded,
        'content-type': 'application/json',
      },
      body: '{}',
    }).then((r) => r.status);

  it('off (the default): invented addresses share the socket address, and the throttle holds', async () => {
    const gw = await start(false);
    try {
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push(await attempt(gw, `203.0.113.${i}`));
      expect(statuses.slice(0, 3)).to.deep.equal([401, 401, 401]);
      expect(statuses.slice(3)).to.deep.equal([429, 429]);
    } finally {
      await gw.stop();
    }
  });

  it("on: the proxy's last hop is the client; one address throttled does not throttle another", async () => {
    const gw = await start(true);
    try {
      for (let i = 0; i < 3; i++) expect(await attempt(gw, `198.51.100.7, 203.0.113.1`)).to.equal(401);
      expect(await attempt(gw, '198.51.100.7, 203.0.113.1')).to.equal(429);
      // A client that prepends an address is still the proxy's last hop.
      expect(await attempt(gw, '10.9.9.9, 203.0.113.1')).to.equal(429);
      expect(await attempt(gw, '203.0.113.2')).to.equal(401);
    } finally {
      await gw.stop();
    }
  });
});
