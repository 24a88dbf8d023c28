import { expect } from 'chai';
import type { ServerResponse } from 'node:http';
import { postJson, sseData, startTestGateway, testConfig, type TestGateway } from '../helpers/gateway';
import { ADMIN_KEY, makeAccountKey } from '../helpers/accounts';
import { MockUpstream } from '../helpers/mock-upstream';
import { settled } from '../plugins/credit/books';

/**
 * Chat stream passthrough (docs/decisions/0035-chat-stream-passthrough.md): content chunks of an OpenAI-compatible
 * upstream reach the client as the upstream's bytes (only id and model replaced, usage null added where absent), the
 * gateway reads what it bills and stores from them, and an observer that may rewrite turns it off.
 */
const HEAD = '{"id":"chatcmpl-up","object":"chat.completion.chunk","created":1741569952,"model":"gpt-4o-2024-08-06"';
const content = (text: string, extra = '') =>
  `${HEAD},"system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":"${text}"},"logprobs":null,"finish_reason":null}]${extra}}`;
const ROLE = `${HEAD},"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}`;
const FINISH = `${HEAD},"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}`;
const usage = (p: number, c: number) =>
  `${HEAD},"choices":[],"usage":{"prompt_tokens":${p},"completion_tokens":${c},"total_tokens":${p + c}}}`;
/** Content chunks with what a parse and re-serialise would change: escapes, a field the gateway does not know. */
const CONTENT = [
  content('caf\\u00e9 \\"quoted\\"', ',"usage":null,"obfuscation":"Xy"'),
  content(' two', ',"usage":null'),
  content(' three'), // no usage key: the gateway adds "usage":null (spec 4.1)
];

function sse(res: ServerResponse, events: string[], end = true): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const e of events) res.write(`data: ${e}\n\n`);
  if (end) res.end('data: [DONE]\n\n');
}

/**
 * The upstream's chunk as the client should get it: the gateway's id and the client's model, and the provider that
 * served it stamped at its end (OpenRouter's `provider` field, as on every chunk), nothing else.
 */
const asForwarded = (upstream: string, id: string) => {
  const s = upstream
    .replace('"id":"chatcmpl-up"', `"id":"${id}"`)
    .replace('"model":"gpt-4o-2024-08-06"', '"model":"up/m"');
  return `${s.includes('"usage"') ? s.slice(0, -1) : `${s.slice(0, -1)},"usage":null`},"provider":"up"}`;
};

const MODEL = {
  id: 'up/m',
  owned_by: 'up',
  pricing: { prompt: 0.000001, completion: 0.000002 },
  deployments: [{ provider: 'up', model: 'm' }],
};

function config(up: MockUpstream, plugins: unknown[]) {
  return testConfig(
    { providers: [{ name: 'up', type: 'openai', api_base: `${up.url}/v1` }], models: [MODEL], plugins },
    { GATEWAY_ADMIN_KEY: ADMIN_KEY },
  );
}

const ask = (gw: TestGateway, key: string, extra: Record<string, unknown> = {}) =>
  postJson(
    `${gw.url}/v1/chat/completions`,
    { model: 'up/m', stream: true, messages: [{ role: 'user', content: 'hi' }], ...extra },
    { authorization: `Bearer ${key}` },
  );

describe('chat stream passthrough', function () {
  this.timeout(30_000);
  let up: MockUpstream;
  let gw: TestGateway;
  before(async () => {
    up = await new MockUpstream().start();
    gw = await startTestGateway(config(up, ['auth', 'credit', 'storage', 'metrics', 'routing']));
  });
  after(async () => {
    await gw.stop();
    await up.stop();
  });

  it('forwards content chunks byte for byte (only id and model replaced); usage, storage and billing still read them', async () => {
    up.enqueue((_req, res) => sse(res, [ROLE, ...CONTENT, FINISH, usage(9, 4)]));
    const { key, accountId } = await makeAccountKey(gw, { credits: 1 });
    const frames = sseData(await (await ask(gw, key, { stream_options: { include_usage: true } })).text());
    const id = (JSON.parse(frames[0]) as { id: string }).id;
    expect(id)
      .to.match(/^chatcmpl-/)
      .and.not.equal('chatcmpl-up');
    // The role chunk is the gateway's own serialisation; every content chunk is the upstream's text.
    expect(frames.slice(1, 4)).to.deep.equal(CONTENT.map((c) => asForwarded(c, id)));
    expect(frames[1]).to.contain('caf\\u00e9 \\"quoted\\"').and.contain('"obfuscation":"Xy"');
    const last = JSON.parse(frames[5]) as { choices: unknown[]; usage: { total_tokens: number; cost: number } };
    expect(last.choices).to.deep.equal([]);
    expect(last.usage.total_tokens).to.equal(13);
    expect(frames[6]).to.equal('[DONE]');
    await settled(gw, accountId);
    const [g] = await gw.services.store.generations.list({ accountId, limit: 1 });
    expect(g).to.include({ status: 'completed', promptTokens: 9, completionTokens: 4 });
    expect(g.cost).to.equal(9 * 1000 + 4 * 2000);
    expect(await gw.services.store.ledger.sum(accountId)).to.equal(g.cost);
    const stored = (await (
      await fetch(`${gw.url}/responses/${id}`, { headers: { authorization: `Bearer ${key}` } })
    ).json()) as {
      output: Array<{ content: Array<{ text: string }> }>;
    };
    expect(stored.output[0].content[0].text).to.equal('café "quoted" two three');
  });

  for (const ending of ['cut', 'error event', 'client gone'] as const) {
    it(`bills exactly what was produced when the stream ends early (${ending})`, async () => {
      let closed!: () => void;
      const upstreamClosed = new Promise<void>((r) => (closed = r));
      up.enqueue((_req, res) => {
        res.on('close', () => closed());
        sse(res, [ROLE, content('one two'), content(' three four')], false);
        if (ending === 'cut') setTimeout(() => res.socket?.destroy(), 50);
        if (ending === 'error event')
          setTimeout(() => res.end(`data: {"error":{"message":"overloaded","type":"overloaded_error"}}\n\n`), 50);
      });
      const { key, accountId } = await makeAccountKey(gw, { credits: 1 });
      const res = await ask(gw, key);
      if (ending === 'client gone') {
        const reader = res.body!.getReader();
        let text = '';
        while (!text.includes('four')) text += new TextDecoder().decode((await reader.read()).value);
        await reader.cancel();
        await upstreamClosed;
      } else {
        const frames = sseData(await res.text());
        const id = (JSON.parse(frames[0]) as { id: string }).id;
        expect(frames[1]).to.equal(asForwarded(content('one two'), id)); // passed through
        const error = (JSON.parse(frames.at(-1)!) as { error: { code: string; message: string } }).error;
        if (ending === 'cut') expect(error.code).to.equal('stream_interrupted');
        else expect(error.message).to.contain('overloaded');
      }
      await settled(gw, accountId);
      const [g] = await gw.services.store.generations.list({ accountId, limit: 1 });
      expect(g).to.include({ status: 'incomplete', completionTokens: 4, cancelled: ending === 'client gone' });
      expect(g.cost).to.equal(g.promptTokens * 1000 + 4 * 2000);
      expect((await gw.services.store.accounts.get(accountId))!.usage).to.equal(g.cost);
      expect(await gw.services.store.ledger.sum(accountId)).to.equal(g.cost);
    });
  }
});

describe('chat stream passthrough is off when an observer may rewrite', function () {
  this.timeout(30_000);
  it('a rewriting observer (the redactor) gets whole chunks: the stream is the gateway serialisation, redacted', async () => {
    const up = await new MockUpstream().start();
    const gw = await startTestGateway(config(up, [{ use: './test/fixtures/plugins/redactor', config: {} }, 'routing']));
    try {
      up.enqueue((_req, res) =>
        sse(res, [ROLE, content('a secret', ',"usage":null,"obfuscation":"Xy"'), FINISH, usage(9, 2)]),
      );
      const res = await postJson(`${gw.url}/v1/chat/completions`, {
        model: 'up/m',
        stream: true,
        messages: [{ role: 'user', content: 'hi' }],
      });
      const frames = sseData(await res.text());
      const chunk = JSON.parse(frames[1]) as {
        model: string;
        obfuscation: string;
        choices: Array<{ delta: { content: string } }>;
      };
      expect(chunk.choices[0].delta.content).to.equal('a [redacted]');
      // Whole chunks: the fields the gateway does not read survive, in its own serialisation.
      expect(chunk).to.include({ model: 'up/m', obfuscation: 'Xy' });
      expect(frames[1]).to.equal(JSON.stringify(chunk));
      expect(frames.at(-1)).to.equal('[DONE]');
    } finally {
      await gw.stop();
      await up.stop();
    }
  });
});
