import { expect } from 'chai';
import type { ServerResponse } from 'node:http';
import { postJson, startTestGateway, type TestGateway } from '../../helpers/gateway';
import { makeAccountKey } from '../../helpers/accounts';
import { creditConfig } from '../../helpers/credit';
import { MockUpstream } from '../../helpers/mock-upstream';
import { anthropicEvent as ev, messageStart } from '../../helpers/anthropic-sse';
import { countTextTokens } from '../../../src/tokens/count';
import { settled } from './books';

/**
 * Issue 41, exact billing on every ending: a client that leaves an Anthropic stream during reasoning (or an upstream
 * that breaks it) is billed the input Anthropic reported in `message_start` at its cache prices, and the reasoning
 * and text produced so far, not the gateway's own count of the prompt at the full price with nothing for the output.
 */
const PRICING = { prompt: 0.000003, completion: 0.000015, cache_read: 0.0000003, cache_write: 0.00000375 };
const NANO = { prompt: 3000, completion: 15000, cacheRead: 300 };
const START = { input_tokens: 30, cache_read_input_tokens: 2400, cache_creation_input_tokens: 0 };
const THOUGHT = 'first I weigh the question carefully and then the answer';
const LONG_PROMPT = 'please think about this long shared context '.repeat(300);

function thinkingStream(endWith: 'hang' | 'error') {
  return async (_req: unknown, res: ServerResponse): Promise<void> => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const send = (e: { event: string; data: unknown }) =>
      res.write(`event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`);
    send(messageStart(START, 'claude-sonnet'));
    send(ev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }));
    for (let i = 0; i < 4; i++) {
      send(ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: THOUGHT } }));
      await new Promise((r) => setTimeout(r, 10));
    }
    if (endWith === 'error') {
      send(ev('error', { error: { type: 'overloaded_error', message: 'Overloaded' } }));
      res.end();
      return;
    }
    // The client leaves: keep thinking slowly until the gateway closes the connection.
    for (let i = 0; i < 200 && !res.destroyed; i++) {
      await new Promise((r) => setTimeout(r, 25));
      if (!res.destroyed)
        send(ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: THOUGHT } }));
    }
    res.end();
  };
}

describe('credit: a stream that ends early bills the usage Anthropic reported at its start (issue 41)', function () {
  this.timeout(20000);
  let up: MockUpstream;
  let gw: TestGateway;
  before(async () => {
    up = await new MockUpstream().start();
    gw = await startTestGateway(
      creditConfig({
        providers: [{ name: 'anthropic', type: 'anthropic', api_base: up.url, api_key: 'k' }],
        models: [
          {
            id: 'a/claude',
            context_length: 200000,
            pricing: PRICING,
            deployments: [{ provider: 'anthropic', model: 'claude-sonnet' }],
          },
        ],
        plugins: ['auth', 'params', 'credit', 'routing'],
      }),
    );
  });
  after(async () => {
    await gw.stop();
    await up.stop();
  });

  const ask = (key: string) =>
    postJson(
      `${gw.url}/v1/chat/completions`,
      {
        model: 'a/claude',
        stream: true,
        max_tokens: 2000,
        reasoning: { max_tokens: 1024 },
        messages: [{ role: 'user', content: LONG_PROMPT }],
      },
      { authorization: `Bearer ${key}` },
    );

  async function record(accountId: string) {
    await settled(gw, accountId);
    const [g] = await gw.services.store.generations.list({ accountId, limit: 1 });
    return g;
  }

  it('the client leaves during reasoning: billed 30 input + 2,400 cache reads and the reasoning so far', async () => {
    up.enqueue(thinkingStream('hang'));
    const { key, accountId } = await makeAccountKey(gw, { credits: 1 });
    const res = await ask(key);
    expect(res.status).to.equal(200);
    const reader = res.body!.getReader();
    let text = '';
    while ((text.match(/"reasoning":"first/g) ?? []).length < 4)
      text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    const g = await record(accountId);
    expect(g).to.include({ cancelled: true, status: 'incomplete', promptTokens: 2430, cachedTokens: 2400 });
    expect(g.completionTokens, 'the reasoning produced so far').to.be.at.least(4 * countTextTokens(THOUGHT));
    expect(g.reasoningTokens).to.equal(g.completionTokens);
    expect(g.cost).to.equal(30 * NANO.prompt + 2400 * NANO.cacheRead + g.completionTokens * NANO.completion);
    expect((await gw.services.store.accounts.get(accountId))!.usage).to.equal(g.cost);
  });

  it('the upstream breaks during reasoning: the same, with its error', async () => {
    up.enqueue(thinkingStream('error'));
    const { key, accountId } = await makeAccountKey(gw, { credits: 1 });
    const res = await ask(key);
    const body = await res.text();
    expect(body).to.include('Overloaded');
    const g = await record(accountId);
    expect(g).to.include({ status: 'incomplete', promptTokens: 2430, cachedTokens: 2400 });
    expect(g.completionTokens).to.equal(4 * countTextTokens(THOUGHT));
    expect(g.cost).to.equal(30 * NANO.prompt + 2400 * NANO.cacheRead + g.completionTokens * NANO.completion);
  });
});
