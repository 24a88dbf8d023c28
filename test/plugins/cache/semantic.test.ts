import { expect } from 'chai';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestGateway } from '../../helpers/gateway';
import { adminCall, makeAccountKey } from '../../helpers/accounts';
import { sendJson, type MockUpstream } from '../../helpers/mock-upstream';
import { cacheGateway, chat, scriptedUpstream } from './helpers';

/** The scripted embeddings: cosine to "cats" is 0.97 for "kittens", 0.6 for "dogs", 0 for anything else. */
function vectorOf(input: string): number[] {
  if (input.includes('kittens')) return [0.97, Math.sqrt(1 - 0.97 * 0.97), 0];
  if (input.includes('cats')) return [1, 0, 0];
  if (input.includes('dogs')) return [0.6, 0.8, 0];
  return [0, 0, 1];
}

const ask = (content: string, extra: Record<string, unknown> = {}) => ({
  model: 'up/m',
  temperature: 0,
  messages: [{ role: 'user', content: `Tell me about ${content}` }],
  ...extra,
});

describe('cache plugin: semantic cache (scripted embeddings)', function () {
  this.timeout(60000);
  let up: MockUpstream;
  let gw: TestGateway;
  let key: string;
  let accountId: string;
  let operatorAccount: string;
  const store = { driver: 'sqlite', path: join(mkdtempSync(join(tmpdir(), 'gw-cache-sem-')), 'g.db') };

  before(async () => {
    up = scriptedUpstream();
    const chatHandler = up.handler;
    up.handler = (req, res, n) => {
      if (!req.path.endsWith('/embeddings')) return chatHandler(req, res, n);
      const input = String((req.json as { input: unknown }).input);
      sendJson(res, 200, {
        object: 'list',
        data: [{ object: 'embedding', index: 0, embedding: vectorOf(input) }],
        model: 'e',
        usage: { prompt_tokens: 5, total_tokens: 5 },
      });
    };
    await up.start();
    // The operator's key the semantic cache embeds with: made on a first start of the same store.
    const first = await cacheGateway(up, {}, { store });
    const operator = await makeAccountKey(first, { credits: 10, name: 'operator' });
    operatorAccount = operator.accountId;
    await first.stop();
    gw = await cacheGateway(
      up,
      {
        semantic: {
          models: ['up/m', 'up/other'],
          embeddings_model: 'up/e',
          api_key: operator.key,
          threshold: 0.9,
        },
      },
      { store },
    );
    ({ key, accountId } = await makeAccountKey(gw, { credits: 10 }));
    expect(accountId).to.not.equal(operator.accountId);
  });
  after(async () => {
    await gw?.stop();
    await up?.stop();
  });

  const chats = () => up.requests.filter((r) => r.path.endsWith('/chat/completions')).length;

  it('above the threshold a similar prompt hits the stored answer; the record names the entry and similarity', async () => {
    const a = await chat(gw, key, ask('cats'));
    expect(a.cache).to.equal('miss');
    const before = chats();
    const b = await chat(gw, key, ask('kittens'));
    expect(b.cache).to.equal('hit');
    expect(chats()).to.equal(before);
    expect(b.json.choices).to.deep.equal(a.json.choices);
    const rec = async (id: unknown) =>
      (await adminCall(gw, 'GET', `/v1/generation?id=${String(id)}`)).body.data as Record<string, unknown>;
    const ra = await rec(a.json.id);
    const rb = await rec(b.json.id);
    expect(rb.cache).to.equal('hit');
    expect(rb.cache_similarity).to.be.closeTo(0.97, 1e-6);
    // The entry matched is the one "cats" stored: the exact hit on "cats" serves the same digest.
    const again = await chat(gw, key, ask('cats'));
    expect(again.cache).to.equal('hit');
    expect((await rec(again.json.id)).cache_entry).to.equal(rb.cache_entry);
    expect(ra.cache).to.equal('miss');
  });

  it('below the threshold it misses', async () => {
    const before = chats();
    expect((await chat(gw, key, ask('dogs'))).cache).to.equal('miss');
    expect(chats()).to.equal(before + 1);
  });

  it('never across models, parameters or accounts', async () => {
    expect((await chat(gw, key, ask('kittens', { model: 'up/other' }))).cache).to.equal('miss');
    expect((await chat(gw, key, ask('kittens', { max_tokens: 5 }))).cache).to.equal('miss');
    const other = await makeAccountKey(gw, { credits: 10 });
    expect((await chat(gw, other.key, ask('kittens'))).cache).to.equal('miss');
  });

  it("the embeddings are metered to the operator's account, not the client's", async () => {
    const usage = async (id: string) =>
      ((await adminCall(gw, 'GET', `/v1/accounts/${id}`)).body.data as { usage: number }).usage;
    const embeds = up.requests.filter((r) => r.path.endsWith('/embeddings')).length;
    expect(embeds).to.be.greaterThan(0);
    // Each embedding the upstream made: 5 prompt tokens at 1000 nano-credits (repeats are exact-cache hits, free).
    expect(Math.round((await usage(operatorAccount)) * 1e9)).to.equal(embeds * 5 * 1000);
    expect(await usage(accountId)).to.be.greaterThan(0);
  });
});
