import { expect } from 'chai';
import { startTestGateway, testConfig, postJson } from '../helpers/gateway';
import { checkApiBase } from '../../plugins/fallback/ssrf';
import type { GatewayError } from '../../src/errors';
import { MockUpstream, openaiFixtures, sendJson } from '../helpers/mock-upstream';

describe('hostile: per-request overrides: unresolvable hosts, uncarriable keys (issue 15, items 1 and 8)', () => {
  it('is answered with the error object over a real socket, never a 500', async () => {
    const gw = await startTestGateway(
      testConfig({
        plugins: [
          { fallback: { num_retries: 0, overrides: { allow: true, api_base_allowlist: ['nowhere.invalid'] } } },
          'routing',
        ],
      }),
    );
    try {
      const res = await postJson(`${gw.url}/v1/chat/completions`, {
        model: 'mock/gpt-4o-mini',
        api_base: 'https://nowhere.invalid/v1',
        api_key: 'sk-client-own',
        messages: [{ role: 'user', content: 'x' }],
      });
      // `.invalid` never resolves (RFC 6761): 400 when the resolver says so, 502 when there is no resolver to ask.
      expect(res.status).to.be.oneOf([400, 502]);
      const err = ((await res.json()) as { error: Record<string, unknown> }).error;
      for (const f of ['message', 'type', 'param', 'code']) expect(err[f]).to.be.a('string');
      expect(err.code).to.be.oneOf(['api_base_unresolvable', 'upstream_unreachable']);
    } finally {
      await gw.stop();
    }
  });

  it("a name that does not exist is the client's 400 naming api_base; a resolver failing for now is a 502", async () => {
    const policy = { allow: ['nowhere.example'], allowPrivate: [], self: { host: '127.0.0.1', port: 8080 } };
    const failing = (code: string) =>
      (async () => Promise.reject(Object.assign(new Error(`getaddrinfo ${code}`), { code }))) as never;
    const notFound = await checkApiBase('https://nowhere.example/v1', policy, failing('ENOTFOUND')).catch(
      (e: GatewayError) => e,
    );
    expect(notFound).to.include({ status: 400, code: 'api_base_unresolvable', param: 'api_base' });
    const again = await checkApiBase('https://nowhere.example/v1', policy, failing('EAI_AGAIN')).catch(
      (e: GatewayError) => e,
    );
    expect(again).to.include({ status: 502, code: 'upstream_unreachable' });
  });

  it("a client's own api_key that HTTP cannot carry is its 400, checked before undici sees it (was a 502)", async () => {
    const own = await new MockUpstream().start();
    own.handler = (_r, res) => sendJson(res, 200, openaiFixtures.completion('ok'));
    const gw = await startTestGateway(
      testConfig({
        providers: [{ name: 'up', type: 'openai', api_base: 'http://127.0.0.1:9/v1', api_key: 'sk-operator' }],
        models: [{ id: 'm', deployments: [{ provider: 'up', model: 'gpt' }] }],
        plugins: [
          {
            fallback: {
              num_retries: 2,
              overrides: { allow: true, api_base_allowlist: ['localhost'], allow_private: ['127.0.0.1/32'] },
            },
          },
          'routing',
        ],
      }),
    );
    try {
      const base = `${own.url.replace('127.0.0.1', 'localhost')}/v1`;
      for (const apiKey of ['sk-日本語', 'sk-a\u0000b', 'sk-\u2028']) {
        const res = await postJson(`${gw.url}/v1/chat/completions`, {
          model: 'm',
          api_base: base,
          api_key: apiKey,
          messages: [{ role: 'user', content: 'x' }],
        });
        expect(res.status, JSON.stringify(apiKey)).to.equal(400);
        expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('invalid_header');
      }
      expect(own.connections).to.equal(0);
      const ok = await postJson(`${gw.url}/v1/chat/completions`, {
        model: 'm',
        api_base: base,
        api_key: 'sk-fine',
        messages: [{ role: 'user', content: 'x' }],
      });
      expect(ok.status).to.equal(200);
    } finally {
      await gw.stop();
      await own.stop();
    }
  });
});
