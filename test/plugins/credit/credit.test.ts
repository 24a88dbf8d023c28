import { expect } from 'chai';
import OpenAI from 'openai';
import { startTestGateway, postJson, sseData, type TestGateway } from '../../helpers/gateway';
import { adminCall, makeAccountKey } from '../../helpers/accounts';
import { MockUpstream, openaiFixtures } from '../../helpers/mock-upstream';
import { fromNano } from '../../../src/store/money';
import { MODEL, creditConfig, exactRequest } from '../../helpers/credit';
import { keyedClient, sdkClient } from '../../helpers/sdk';
import { creditOf } from '../../helpers/store';

async function settled(gw: TestGateway, accountId: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if ((await creditOf(gw.services.store).openReservations(accountId)) === 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('reservations still open');
}

describe('credit', () => {
  let gw: TestGateway;
  before(async () => {
    gw = await startTestGateway(creditConfig());
  });
  after(() => gw.stop());

  it('charges the real cost, shows usage.cost, and records the generation', async () => {
    const { key, accountId, client } = await keyedClient(gw, { credits: 1 });
    const c = await client.chat.completions.create(
      { model: MODEL, messages: [{ role: 'user', content: 'Hello there, gateway!' }] },
      { headers: { 'HTTP-Referer': 'https://app.example', 'X-Title': 'Example App' } },
    );
    const usage = c.usage as unknown as { prompt_tokens: number; completion_tokens: number; cost: number };
    const expected = usage.prompt_tokens * 1000 + usage.completion_tokens * 2000;
    expect(usage.cost).to.equal(fromNano(expected));
    await settled(gw, accountId);
    const credits = await adminCall(gw, 'GET', '/v1/credits', undefined, key);
    expect(credits.body.data).to.deep.equal({ total_credits: 1, total_usage: fromNano(expected) });
    const g = await adminCall(gw, 'GET', `/v1/generation?id=${c.id}`, undefined, key);
    expect(g.status).to.equal(200);
    expect(g.body.data).to.deep.include({
      id: c.id,
      model: MODEL,
      provider: 'mock',
      tokens_prompt: usage.prompt_tokens,
      tokens_completion: usage.completion_tokens,
      total_cost: fromNano(expected),
      streamed: false,
      cancelled: false,
      status: 'completed',
      finish_reason: 'stop',
    });
    expect((g.body.data as { app: unknown }).app).to.deep.equal({
      referer: 'https://app.example',
      title: 'Example App',
    });
    const other = await makeAccountKey(gw);
    expect((await adminCall(gw, 'GET', `/v1/generation?id=${c.id}`, undefined, other.key)).status).to.equal(404);
    expect((await adminCall(gw, 'GET', `/v1/generation?id=${c.id}`)).status).to.equal(200);
  });

  it('puts usage.cost on the stream usage chunk and charges the same', async () => {
    const { key, accountId, client } = await keyedClient(gw, { credits: 1 });
    const stream = await client.chat.completions.create({
      model: MODEL,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'stream me' }],
    });
    let usage: { prompt_tokens: number; completion_tokens: number; cost?: number } | null = null;
    for await (const ch of stream) if (ch.usage) usage = ch.usage as unknown as typeof usage;
    expect(usage!.cost).to.equal(fromNano(usage!.prompt_tokens * 1000 + usage!.completion_tokens * 2000));
    await settled(gw, accountId);
    expect(
      ((await adminCall(gw, 'GET', '/v1/credits', undefined, key)).body.data as { total_usage: number }).total_usage,
    ).to.equal(usage!.cost);
  });

  it('402 with the limit named and nothing sent upstream when the account or the key cannot cover the request', async () => {
    const up = await new MockUpstream().start();
    const g2 = await startTestGateway(
      creditConfig({
        providers: [{ name: 'up', type: 'openai', api_base: `${up.url}/v1` }],
        models: [
          { id: 'up/m', pricing: { prompt: 0.001, completion: 0.001 }, deployments: [{ provider: 'up', model: 'm' }] },
        ],
      }),
    );
    try {
      const poor = await makeAccountKey(g2, { credits: 0.001 });
      const r1 = await postJson(
        `${g2.url}/v1/chat/completions`,
        { model: 'up/m', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] },
        { authorization: `Bearer ${poor.key}` },
      );
      expect(r1.status).to.equal(402);
      const e1 = ((await r1.json()) as { error: Record<string, string> }).error;
      expect(e1.code).to.equal('insufficient_account_credits');
      expect(Object.values(e1).every((v) => typeof v === 'string')).to.equal(true);
      const limited = await makeAccountKey(g2, { credits: 100, limit: 0.01 });
      const r2 = await postJson(
        `${g2.url}/v1/chat/completions`,
        { model: 'up/m', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] },
        { authorization: `Bearer ${limited.key}` },
      );
      expect(r2.status).to.equal(402);
      expect(((await r2.json()) as { error: { code: string } }).error.code).to.equal('key_limit_exceeded');
      const client = sdkClient(g2, limited.key);
      const e3 = await client.chat.completions
        .create({ model: 'up/m', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] })
        .catch((e: unknown) => e);
      expect((e3 as InstanceType<typeof OpenAI.APIError>).status).to.equal(402);
      expect(up.requests).to.have.length(0);
      expect(await creditOf(g2.services.store).openReservations()).to.equal(0);
    } finally {
      await g2.stop();
      await up.stop();
    }
  });

  it('a key whose limit covers N reservations: of 200 concurrent requests at least N succeed, the rest get 402, usage never passes the limit, the ledger matches the records', async () => {
    const N = 37;
    const { body, cost, reserve } = exactRequest();
    const { key, accountId, hash } = await makeAccountKey(gw, { credits: 1000, limit: fromNano(N * reserve) });
    const results = await Promise.all(
      Array.from({ length: 200 }, () =>
        postJson(`${gw.url}/v1/chat/completions`, body, { authorization: `Bearer ${key}` }).then(async (r) => ({
          status: r.status,
          body: await r.text(),
        })),
      ),
    );
    const ok = results.filter((r) => r.status === 200);
    // A settled request frees the part of its reservation it did not use, so more than N may get in; never past the limit.
    expect(ok.length).to.be.within(N, Math.floor((N * reserve) / cost));
    expect(results.filter((r) => r.status === 402)).to.have.length(200 - ok.length);
    for (const r of ok) expect((JSON.parse(r.body) as { usage: { cost: number } }).usage.cost).to.equal(fromNano(cost));
    await settled(gw, accountId);
    const k = await gw.services.store.keys.get(hash);
    expect(k!.usage).to.equal(ok.length * cost);
    expect(k!.usage).to.be.at.most(k!.limit!);
    expect(k!.reserved).to.equal(0);
    const records = await gw.services.store.generations.list({ accountId, limit: 1000 });
    const recorded = records.reduce((s, g) => s + g.cost, 0);
    expect(await gw.services.store.ledger.sum(accountId)).to.equal(recorded);
    expect(recorded).to.equal(ok.length * cost);
    expect((await gw.services.store.accounts.get(accountId))!.usage).to.equal(ok.length * cost);
  });

  it('a stream the client cuts after a few chunks bills what was produced and leaves no reservation', async () => {
    const { key, accountId } = await makeAccountKey(gw, { credits: 1 });
    const res = await postJson(
      `${gw.url}/v1/chat/completions`,
      { model: 'mock/slow', stream: true, messages: [{ role: 'user', content: 'a b c d e f g h i j k l m n o p' }] },
      { authorization: `Bearer ${key}` },
    );
    const reader = res.body!.getReader();
    let text = '';
    while ((text.match(/data: /g) ?? []).length < 4) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    await settled(gw, accountId);
    const [g] = await gw.services.store.generations.list({ accountId, limit: 1 });
    expect(g).to.include({ streamed: true, cancelled: true, status: 'incomplete' });
    expect(g.completionTokens).to.be.within(1, 10); // of 19 in the whole answer
    expect(g.cost).to.equal(g.promptTokens * 1000 + g.completionTokens * 2000);
    expect((await gw.services.store.accounts.get(accountId))!.usage).to.equal(g.cost);
    expect(await gw.services.store.ledger.sum(accountId)).to.equal(g.cost);
  });

  it('a stream the upstream breaks mid-way bills the produced part and ends with an error event', async () => {
    const up = await new MockUpstream().start();
    const g2 = await startTestGateway(
      creditConfig({
        providers: [{ name: 'up', type: 'openai', api_base: `${up.url}/v1` }],
        models: [
          {
            id: 'up/m',
            pricing: { prompt: 0.000001, completion: 0.000002 },
            deployments: [{ provider: 'up', model: 'm' }],
          },
        ],
      }),
    );
    try {
      up.enqueue((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify(openaiFixtures.chunk({ role: 'assistant', content: 'one two three' }))}\n\n`);
        setTimeout(() => res.socket?.destroy(), 30);
      });
      const { key, accountId } = await makeAccountKey(g2, { credits: 1 });
      const frames = sseData(
        await (
          await postJson(
            `${g2.url}/v1/chat/completions`,
            { model: 'up/m', stream: true, messages: [{ role: 'user', content: 'hi' }] },
            { authorization: `Bearer ${key}` },
          )
        ).text(),
      );
      expect(JSON.parse(frames[frames.length - 1]).error.code).to.equal('stream_interrupted');
      await settled(g2, accountId);
      const [g] = await g2.services.store.generations.list({ accountId, limit: 1 });
      expect(g).to.include({
        status: 'incomplete',
        errorCode: 'stream_interrupted',
        completionTokens: 3,
        cancelled: false,
      });
      expect(g.cost).to.equal(g.promptTokens * 1000 + 3 * 2000);
      expect((await g2.services.store.accounts.get(accountId))!.usage).to.equal(g.cost);
    } finally {
      await g2.stop();
      await up.stop();
    }
  });

  it('custom per-token prices: honoured for allowed accounts, never lower the charge for others', async () => {
    const ask = async (key: string) => {
      const r = await postJson(
        `${gw.url}/v1/chat/completions`,
        {
          model: MODEL,
          max_tokens: 20,
          input_cost_per_token: 0,
          output_cost_per_token: 0.00001,
          messages: [{ role: 'user', content: 'hi' }],
        },
        { authorization: `Bearer ${key}` },
      );
      return (await r.json()) as { usage: { prompt_tokens: number; completion_tokens: number; cost: number } };
    };
    const plain = await makeAccountKey(gw, { credits: 1 });
    const u1 = (await ask(plain.key)).usage;
    expect(u1.cost).to.equal(fromNano(u1.prompt_tokens * 1000 + u1.completion_tokens * 10000)); // input 0 ignored, output raised
    const a = await adminCall(gw, 'POST', '/v1/accounts', { name: 'trusted', credits: 1, custom_pricing: true });
    const k = await adminCall(gw, 'POST', '/v1/keys', { name: 'k', account_id: (a.body.data as { id: string }).id });
    const u2 = (await ask(k.body.key as string)).usage;
    expect(u2.cost).to.equal(fromNano(u2.completion_tokens * 10000));
  });

  it('a reservation left by a crash is released at start-up', async () => {
    const store = gw.services.store;
    const { accountId, hash } = await makeAccountKey(gw, { credits: 1 });
    const r = await creditOf(store).reserve(accountId, hash, 5000);
    expect(r.ok).to.equal(true);
    expect((await store.accounts.get(accountId))!.reserved).to.equal(5000);
    const g2 = await startTestGateway(creditConfig(), { store }); // a new process on the same database
    await g2.stop();
    expect(await creditOf(store).openReservations(accountId)).to.equal(0);
    expect((await store.accounts.get(accountId))!.reserved).to.equal(0);
    expect((await store.keys.get(hash))!.reserved).to.equal(0);
  });

  it('a daily limit starts again after UTC midnight', async () => {
    const store = gw.services.store;
    const { accountId, hash } = await makeAccountKey(gw, { credits: 10 });
    await adminCall(gw, 'PATCH', `/v1/keys/${hash}`, { limit: 0.00001, limit_reset: 'daily' });
    const yesterday = Date.now() - 86_400_000;
    const r1 = await creditOf(store).reserve(accountId, hash, 10_000, yesterday);
    expect(r1.ok).to.equal(true);
    if (r1.ok) await creditOf(store).settle(r1.id, 10_000, null);
    expect((await creditOf(store).reserve(accountId, hash, 1, yesterday)).ok).to.equal(false); // still the same day
    const today = await creditOf(store).reserve(accountId, hash, 10_000);
    expect(today.ok).to.equal(true);
  });
});
