import { expect } from 'chai';
import { postJson, startTestGateway, type TestGateway } from '../../helpers/gateway';
import { adminCall, makeAccountKey } from '../../helpers/accounts';
import { creditConfig } from '../../helpers/credit';
import type { MockUpstream } from '../../helpers/mock-upstream';
import { costBound } from '../../../plugins/credit/bound';
import { requestTokenBound } from '../../../src/tokens/bound';
import { modelPrice } from '../../../plugins/credit/price';
import { toNano } from '../../../src/store/money';
import type { ModelConfig } from '../../../src/config/types';
import { books, burst, noOverruns, served, settled, type Key } from './books';
import { honestModel, honestUpstream } from './honest-upstream';
import { freshPostgresUrl, POSTGRES_URL } from '../../helpers/postgres';
import { creditOf } from '../../helpers/store';

/**
 * Issues 13 + 18: /v1/responses (plain, streamed, cut by the client, continuing a stored
 * conversation) and /v1/embeddings under a key limit with concurrent bursts, against an
 * upstream that counts at the worst an honest provider can: key usage never above the limit,
 * the account never below zero, ledger == sum of the usage.cost returned == sum of the
 * generation records, and no overrun.
 */

function models() {
  return [
    honestModel('up/4o', 'gpt-4o'),
    honestModel('up/slow', 'slow'),
    honestModel('up/embed', 'text-embedding-3-small', { endpoints: ['embeddings'] }),
    ...['huge', 'negative', 'inf'].map((k) =>
      honestModel(`up/embed-liar-${k}`, `liar-${k}`, { endpoints: ['embeddings'] }),
    ),
  ];
}

for (const driver of ['memory', 'postgres'] as const)
  describe(`credit on /v1/responses and /v1/embeddings (issues 13, 18), ${driver} store`, function () {
    this.timeout(60000);
    let up: MockUpstream | undefined;
    let gw: TestGateway;
    before(async function () {
      if (driver === 'postgres' && !POSTGRES_URL) {
        console.warn('    ! GATEWAY_TEST_POSTGRES_URL is not set; the PostgreSQL run did not happen');
        this.skip();
      }
      const store = driver === 'postgres' ? { driver, url: await freshPostgresUrl(), pool_size: 10 } : { driver };
      up = await honestUpstream().start();
      gw = await startTestGateway(
        creditConfig({
          store,
          providers: [{ name: 'up', type: 'openai', api_base: `${up.url}/v1` }],
          models: models(),
          plugins: ['metrics', 'auth', 'params', 'fallback', 'credit', 'storage', 'routing'],
        }),
      );
    });
    after(async () => {
      await gw?.stop();
      await up?.stop();
    });

    const limited = (limit = 1, credits = 100) => makeAccountKey(gw, { credits, limit });
    /** Another key on the same account (a stored response belongs to its account). */
    async function keyOn(accountId: string, limit: number | null): Promise<Key> {
      const k = await adminCall(gw, 'POST', '/v1/keys', { name: 'k2', account_id: accountId, limit });
      expect(k.status).to.equal(201);
      return { key: k.body.key as string, accountId, hash: (k.body.data as { hash: string }).hash };
    }

    it('/v1/responses, plain and streamed, 60 concurrent under a key limit: limit holds, books agree, no overrun', async () => {
      const k = await limited(1);
      const { costs, statuses, bodies } = await burst(
        gw,
        '/v1/responses',
        k,
        (i) => ({
          model: 'up/4o',
          input: `a question in the form of a response, number ${i}`,
          instructions: 'be brief',
          max_output_tokens: 1000,
          ...(i % 2 === 1 ? { stream: true } : {}),
        }),
        60,
      );
      // 1,000 output tokens are 0.03 credits: about 30 fit in the limit.
      expect(served(statuses)).to.be.within(20, 40);
      expect(statuses.filter((s, i) => s === 200 && i % 2 === 1).length, 'some streams served').to.be.greaterThan(0);
      await books(gw, k, costs);
      expect(await noOverruns(gw, k.accountId)).to.equal(served(statuses));
      // The generation id is the response id.
      const plain = bodies.find((b) => !Array.isArray(b) && (b as { id?: string }).id?.startsWith('resp_')) as
        { id: string } | undefined;
      expect((await adminCall(gw, 'GET', `/v1/generation?id=${plain!.id}`, undefined, k.key)).status).to.equal(200);
    });

    it('previous_response_id: the stored conversation is prompt, reserved and bounded', async () => {
      const owner = await makeAccountKey(gw, { credits: 100, limit: null });
      const long = 'the history of this conversation goes on and on '.repeat(600); // about 29 KB
      const first = await postJson(
        `${gw.url}/v1/responses`,
        { model: 'up/4o', input: long, max_output_tokens: 10 },
        { authorization: `Bearer ${owner.key}` },
      );
      expect(first.status).to.equal(200);
      const firstBody = (await first.json()) as { id: string; usage: { cost: number } };
      const previous = firstBody.id;
      // 29 KB of history is about 0.29 credits of prompt at worst: a 0.1 limit covers a fresh question, not the continuation.
      const small = await keyOn(owner.accountId, 0.1);
      const before = up!.requests.length;
      const cont = await burst(
        gw,
        '/v1/responses',
        small,
        () => ({ model: 'up/4o', previous_response_id: previous, input: 'and then?', max_output_tokens: 10 }),
        5,
      );
      expect(cont.statuses).to.deep.equal([402, 402, 402, 402, 402]);
      expect(up!.requests.length).to.equal(before);
      const fresh = await burst(
        gw,
        '/v1/responses',
        small,
        () => ({ model: 'up/4o', input: 'and then?', max_output_tokens: 10 }),
        1,
      );
      expect(fresh.statuses).to.deep.equal([200]);
      // A limit that covers a few continuations: 20 concurrent, the upstream counting the whole history.
      const mid = await keyOn(owner.accountId, 1.2);
      const c = await burst(
        gw,
        '/v1/responses',
        mid,
        (i) => ({
          model: 'up/4o',
          previous_response_id: previous,
          input: `and then ${i}?`,
          max_output_tokens: 10,
          ...(i % 2 ? { stream: true } : {}),
        }),
        20,
      );
      expect(served(c.statuses)).to.be.within(1, 19);
      const seen = up!.requests.slice(before + 1).map((r) => JSON.stringify(r.json));
      expect(seen.every((b) => b.includes('the history of this conversation'))).to.equal(true);
      const all = [toNano(firstBody.usage.cost), ...fresh.costs, ...c.costs];
      await books(gw, mid, all);
      await books(gw, small, all);
      expect(await noOverruns(gw, owner.accountId)).to.be.greaterThan(served(c.statuses));
    });

    it('/v1/responses streams cut by the client: billed for what was produced, never above the bound', async () => {
      const k = await limited(0.2);
      const input = 'stream a long answer please';
      for (let i = 0; i < 3; i++) {
        const res = await postJson(
          `${gw.url}/v1/responses`,
          { model: 'up/slow', input: `${input} ${i}`, max_output_tokens: 1000, stream: true },
          { authorization: `Bearer ${k.key}` },
        );
        expect(res.status).to.equal(200);
        const reader = res.body!.getReader();
        let text = '';
        while (!text.includes('response.output_text.delta'))
          text += new TextDecoder().decode((await reader.read()).value);
        await reader.cancel();
        await settled(gw, k.accountId);
      }
      const records = await gw.services.store.generations.list({ accountId: k.accountId, limit: 10 });
      expect(records).to.have.length(3);
      const model = gw.services.models.get('up/4o') as ModelConfig;
      const bound = costBound(
        modelPrice(model),
        requestTokenBound(
          { model: 'up/slow', messages: [{ role: 'user', content: `${input} 0` }], max_tokens: 1000, stream: true },
          model,
          'openai',
        ),
      );
      for (const g of records) {
        expect(g.cancelled).to.equal(true);
        expect(g.promptTokens, 'the prompt is billed').to.be.greaterThan(0);
        expect(g.completionTokens, 'what was streamed is billed').to.be.greaterThan(0);
        expect(g.completionTokens, 'only what was streamed').to.be.below(40);
        expect(g.cost).to.be.greaterThan(0).and.at.most(bound);
      }
      await books(
        gw,
        k,
        records.map((g) => g.cost),
      );
    });

    it('/v1/embeddings, 60 concurrent under a key limit: limit holds, books agree, no overrun', async () => {
      const k = await limited(0.2);
      const text = (i: number) => `${'an embeddings input of about a kilobyte, '.repeat(25)}${i}`;
      const { costs, statuses } = await burst(
        gw,
        '/v1/embeddings',
        k,
        (i) => ({
          model: 'up/embed',
          input:
            i % 3 === 0
              ? [text(i), text(i + 1)]
              : i % 3 === 1
                ? text(i)
                : [[1, 2, 3, 4], Array.from({ length: 900 }, (_, t) => t)],
        }),
        60,
      );
      // A kilobyte is 0.01 credits at worst: about 12 requests fit.
      expect(served(statuses)).to.be.within(5, 20);
      await books(gw, k, costs);
      expect(await noOverruns(gw, k.accountId)).to.equal(served(statuses));
      const [g] = await gw.services.store.generations.list({ accountId: k.accountId, limit: 1 });
      expect(g.completionTokens).to.equal(0);
    });

    it('/v1/embeddings whose upstream over-reports or reports malformed usage: charged the cap, overrun recorded, no 500', async () => {
      for (const lie of ['huge', 'negative', 'inf']) {
        const k = await limited(1);
        const { costs, statuses, bodies } = await burst(
          gw,
          '/v1/embeddings',
          k,
          () => ({ model: `up/embed-liar-${lie}`, input: 'hello' }),
          3,
        );
        expect(statuses, lie).to.deep.equal([200, 200, 200]);
        const usage = await books(gw, k, costs);
        expect(usage, `${lie}: no credit back, no free answer`).to.be.greaterThan(0);
        const u = (bodies[0] as { usage: { prompt_tokens: unknown } }).usage;
        expect(u.prompt_tokens, 'the client sees checked counts').to.be.a('number').and.at.least(0);
        const records = await gw.services.store.generations.list({ accountId: k.accountId, limit: 10 });
        for (const r of records)
          expect((await creditOf(gw.services.store).overrun(r.id))?.reason, lie).to.equal(
            lie === 'huge' ? 'usage_above_bound' : 'malformed_usage',
          );
      }
    });
  });
