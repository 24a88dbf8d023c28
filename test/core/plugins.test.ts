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
