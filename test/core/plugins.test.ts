import { expect } from 'chai';
import { chainProblems } from '../helpers/plugin-chain';
import { startTestGateway, testConfig, postJson, type TestGateway } from '../helpers/gateway';

const chat = (content: string) => ({ model: 'mock/gpt-4o-mini', messages: [{ role: 'user', content }] });

describe('plugin chain', () => {
  describe('a third-party plugin loaded from a path in YAML', () => {
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway(
        testConfig({
          plugins: [
            { use: './test/fixtures/plugins/banned-words', config: { words: ['forbidden'], header: 'X-Word-Check' } },
            'routing',
          ],
        }),
      );
    });
    after(() => gw.stop());

    it('runs before routing: adds its header to answers', async () => {
      const res = await postJson(`${gw.url}/v1/chat/completions`, chat('hello'));
      expect(res.status).to.equal(200);
      expect(res.headers.get('x-word-check')).to.equal('banned-words');
    });

    it('can reject a request with a GatewayError, serialized as the spec error object', async () => {
      const res = await postJson(`${gw.url}/v1/chat/completions`, chat('this is Forbidden text'));
      expect(res.status).to.equal(400);
      expect(await res.json()).to.deep.equal({
        error: {
          message: 'The message contains a banned word',
          type: 'invalid_request_error',
          param: 'messages[0].content',
          code: 'banned_word',
        },
      });
    });
  });

  describe('response headers on the chat route (its head is written in one call)', () => {
    // With a header set on the context, node merges the head into it; with none, the head is written as it is.
    let gw: TestGateway;
    let stateOnly: TestGateway;
    const headersPlugin = (context: Record<string, string>) => ({
      use: './test/fixtures/plugins/response-headers',
      config: { context, state: { 'X-In-State': 'state', 'cache-control': 'no-store' } },
    });
    before(async () => {
      gw = await startTestGateway(testConfig({ plugins: [headersPlugin({ 'X-On-Context': 'ctx' }), 'routing'] }));
      stateOnly = await startTestGateway(testConfig({ plugins: [headersPlugin({}), 'routing'] }));
    });
    after(async () => {
      await gw.stop();
      await stateOnly.stop();
    });

    it('a completion carries the request id, the headers set on the context and those in the state', async () => {
      for (const [g, context] of [
        [gw, 'ctx'],
        [stateOnly, null],
      ] as const) {
        const res = await postJson(`${g.url}/v1/chat/completions`, chat('hello'), { 'x-request-id': 'head-1' });
        expect(res.status).to.equal(200);
        expect(res.headers.get('x-request-id')).to.equal('head-1');
        expect(res.headers.get('x-on-context')).to.equal(context);
        expect(res.headers.get('x-in-state')).to.equal('state');
        expect(res.headers.get('cache-control')).to.equal('no-store');
        expect(res.headers.get('content-type')).to.equal('application/json; charset=utf-8');
        const text = await res.text();
        expect(res.headers.get('content-length')).to.equal(String(Buffer.byteLength(text)));
        expect(JSON.parse(text)).to.have.property('object', 'chat.completion');
      }
    });

    it('a stream carries them too, a header in the state replacing the stream default of the same name', async () => {
      for (const [g, context] of [
        [gw, 'ctx'],
        [stateOnly, null],
      ] as const) {
        const res = await postJson(
          `${g.url}/v1/chat/completions`,
          { ...chat('hello'), stream: true },
          {
            'x-request-id': 'head-2',
          },
        );
        expect(res.status).to.equal(200);
        expect(res.headers.get('x-request-id')).to.equal('head-2');
        expect(res.headers.get('x-on-context')).to.equal(context);
        expect(res.headers.get('x-in-state')).to.equal('state');
        expect(res.headers.get('cache-control')).to.equal('no-store'); // one value: fetch joins two with ", "
        expect(res.headers.get('content-type')).to.equal('text/event-stream; charset=utf-8');
        expect(await res.text()).to.match(/data: \[DONE\]\n\n$/);
      }
    });

    it("a state header never doubles one the gateway writes: the body's type and length stay the gateway's", async () => {
      const clash = await startTestGateway(
        testConfig({
          plugins: [
            {
              use: './test/fixtures/plugins/response-headers',
              config: { state: { 'content-type': 'text/plain', 'content-length': '1', 'x-request-id': 'from-state' } },
            },
            'routing',
          ],
        }),
      );
      try {
        const res = await postJson(`${clash.url}/v1/chat/completions`, chat('hello'), { 'x-request-id': 'head-4' });
        expect(res.status).to.equal(200);
        // One value each (fetch joins repeated headers with ", "); the state may name the request, as setHeader let it.
        expect(res.headers.get('content-type')).to.equal('application/json; charset=utf-8');
        expect(res.headers.get('x-request-id')).to.equal('from-state');
        const text = await res.text();
        expect(res.headers.get('content-length')).to.equal(String(Buffer.byteLength(text)));
        expect(JSON.parse(text)).to.have.property('object', 'chat.completion');
      } finally {
        await clash.stop();
      }
    });

    it('an error on the chat route carries the request id (and a made one when the client sent none)', async () => {
      const res = await postJson(
        `${stateOnly.url}/v1/chat/completions`,
        { ...chat('hello'), model: 'no/such' },
        {
          'x-request-id': 'head-3',
        },
      );
      expect(res.status).to.equal(404);
      expect(res.headers.get('x-request-id')).to.equal('head-3');
      expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('model_not_found');
      const made = await postJson(`${stateOnly.url}/v1/chat/completions`, { messages: [] });
      expect(made.status).to.equal(400);
      expect(made.headers.get('x-request-id')).to.match(/^req_[A-Za-z0-9_-]{24}$/);
    });
  });

  it('refuses an unknown plugin name, listing the built-in ones', async () => {
    const p = await chainProblems(['nosuch', 'routing']);
    expect(p[0].pointer).to.equal('/plugins/0');
    expect(p[0].message).to.match(/^unknown plugin 'nosuch'; built-in plugins: .*routing/);
  });

  it("validates a plugin's own config against its schema, with the JSON pointer", async () => {
    const p = await chainProblems([
      { use: './test/fixtures/plugins/banned-words', config: { words: [], colour: 1 } },
      'routing',
    ]);
    expect(p.map((x) => x.pointer)).to.include.members(['/plugins/0/config/words', '/plugins/0/config/colour']);
    expect(p.every((x) => x.message.startsWith("plugin 'banned-words': "))).to.equal(true);
    const q = await chainProblems([{ routing: { stream_idle_timeout_ms: 'soon' } }]);
    expect(q[0]).to.deep.include({ pointer: '/plugins/0/routing/stream_idle_timeout_ms' });
  });

  it('refuses a chain whose order breaks requires/provides, naming both plugins', async () => {
    const p = await chainProblems([
      { use: './test/fixtures/plugins/needs-principal' },
      { use: './test/fixtures/plugins/gives-principal' },
      'routing',
    ]);
    expect(p).to.have.length(1);
    expect(p[0].message).to.equal(
      "plugin 'needs-principal' requires 'principal', which plugin 'gives-principal' provides, but 'gives-principal' comes after 'needs-principal'; move 'gives-principal' before it",
    );
    const q = await chainProblems([{ use: './test/fixtures/plugins/needs-principal' }, 'routing']);
    expect(q[0].message).to.equal(
      "plugin 'needs-principal' requires 'principal', which no plugin in the chain provides",
    );
  });

  it('refuses a chain that does not end with the terminal plugin', async () => {
    const p = await chainProblems(['routing', { use: './test/fixtures/plugins/gives-principal' }]);
    expect(p.map((x) => x.message)).to.include(
      "plugin 'routing' ends the chain and must be listed last; 'gives-principal' comes after it",
    );
  });

  it('accepts the same plugins in a working order', async () => {
    const gw = await startTestGateway(
      testConfig({
        plugins: [
          { use: './test/fixtures/plugins/gives-principal' },
          { use: './test/fixtures/plugins/needs-principal' },
          'routing',
        ],
      }),
    );
    try {
      expect((await postJson(`${gw.url}/v1/chat/completions`, chat('hi'))).status).to.equal(200);
    } finally {
      await gw.stop();
    }
  });
});
