import { expect } from 'chai';
import { startTestGateway, postJson, type TestGateway } from '../../helpers/gateway';
import { adminCall, makeAccountKey } from '../../helpers/accounts';
import type { MockUpstream } from '../../helpers/mock-upstream';
import { creditConfig } from '../../helpers/credit';
import { toNano } from '../../../src/store/money';
import { honestModel, honestUpstream } from './honest-upstream';
import { books, burst, settled, type Key } from './books';
import { creditOf } from '../../helpers/store';

/**
 * Issue 13: a hostile but ordinary client (and a misbehaving upstream) against the full
 * chain. For every case: the key's usage never passes its limit, the account's balance never
 * goes below zero, and ledger == sum of the usage.cost returned == sum of the generation records.
 */
const PRICEY = { prompt: 0.0001, completion: 0.0003 };

function models() {
  return [
    honestModel('up/4o', 'gpt-4o', { credit_bound: { image_tokens: { low: 85, high: 1445 }, audio_tokens: 1500 } }),
    honestModel('up/mini', 'gpt-4o-mini'),
    honestModel('up/pricey', 'gpt-4o', { pricing: PRICEY }),
    honestModel('up/fails', 'fail'),
    honestModel('up/flaky', 'flaky'),
    honestModel('up/slow', 'slow'),
    honestModel('up/strict', 'gpt-4o', { credit_bound: { unbounded_items: 'refuse' } }),
    ...['huge', 'negative', 'inf', 'string'].map((k) => honestModel(`up/liar-${k}`, `liar-${k}`)),
  ];
}

describe('credit limits hold against any request (issue 13)', function () {
  this.timeout(60000);
  let up: MockUpstream;
  let gw: TestGateway;
  before(async () => {
    up = await honestUpstream().start();
    gw = await startTestGateway(
      creditConfig({
        providers: [{ name: 'up', type: 'openai', api_base: `${up.url}/v1` }],
        models: models(),
        plugins: [
          'metrics',
          'auth',
          'params',
          { fallback: { num_retries: 0, backoff_base_ms: 1, backoff_max_ms: 2 } },
          'credit',
          'routing',
        ],
      }),
    );
  });
  after(async () => {
    await gw.stop();
    await up.stop();
  });

  const hammer = (k: Key, body: (i: number) => unknown, count: number) =>
    burst(gw, '/v1/chat/completions', k, body, count);

  const limited = (limit = 1, credits = 100) => makeAccountKey(gw, { credits, limit });
  const user = (content: unknown) => [{ role: 'user', content }];
  const ok = (statuses: number[]) => statuses.filter((s) => s === 200).length;

  it('60 concurrent high-detail images, honest upstream count: usage within the limit, no overrun', async () => {
    for (const model of ['up/4o', 'up/mini']) {
      const k = await limited();
      const img = (detail: string) => ({ type: 'image_url', image_url: { url: 'https://img.example/a.png', detail } });
      const { costs, statuses } = await hammer(
        k,
        (i) => ({
          model,
          max_tokens: 50,
          messages: user([{ type: 'text', text: `what is in picture ${i}?` }, img(i % 3 === 0 ? 'low' : 'high')]),
        }),
        60,
      );
      expect(ok(statuses)).to.be.greaterThan(0);
      await books(gw, k, costs);
    }
    const records = await gw.services.store.generations.list({ limit: 1000 });
    for (const g of records) expect((await creditOf(gw.services.store).overrun(g.id))?.reason ?? null).to.equal(null);
  });

  it('a fallback entry that overrides messages with a long prompt is reserved for its own prompt', async () => {
    const k = await limited();
    const long = 'lorem ipsum dolor sit amet '.repeat(2300); // about 62 KB: 0.62 credits a prompt at worst
    const { costs, statuses } = await hammer(
      k,
      () => ({
        model: 'up/fails',
        max_tokens: 10,
        messages: user('hi'),
        fallbacks: [{ model: 'up/4o', messages: user(long) }],
      }),
      10,
    );
    expect(ok(statuses)).to.equal(1);
    expect(statuses.filter((s) => s === 402)).to.have.length(9);
    await books(gw, k, costs);
  });

  it('fallbacks: ["a-pricier-model"] and models: [...] are reserved and billed at the pricier model', async () => {
    for (const route of [{ fallbacks: ['up/pricey'] }, { models: ['up/fails', 'up/pricey'] }]) {
      const k = await limited();
      const { costs, statuses } = await hammer(
        k,
        (i) => ({ model: 'up/fails', max_tokens: 300, messages: user(`question ${i}`), ...route }),
        30,
      );
      // At the pricier price 300 output tokens are 0.09 credits: at most 11 fit in the limit.
      expect(ok(statuses)).to.be.within(1, 11);
      await books(gw, k, costs);
    }
  });

  it('a fallback entry is validated with the request schema', async () => {
    const k = await limited();
    const r = await postJson(
      `${gw.url}/v1/chat/completions`,
      { model: 'up/fails', messages: user('hi'), fallbacks: [{ model: 'up/4o', temperature: 99 }] },
      { authorization: `Bearer ${k.key}` },
    );
    expect(r.status).to.equal(400);
    expect(((await r.json()) as { error: { param: string } }).error.param).to.equal('fallbacks[0].temperature');
    const r2 = await postJson(
      `${gw.url}/v1/chat/completions`,
      { model: 'up/fails', messages: user('hi'), fallbacks: [{ model: 'up/4o', api_key: 'sk-x' }] },
      { authorization: `Bearer ${k.key}` },
    );
    expect(r2.status).to.equal(400);
    expect(((await r2.json()) as { error: { param: string } }).error.param).to.equal('fallbacks[0].api_key');
  });

  it('prototype keys in the body are refused before anything is reserved or sent', async () => {
    const k = await limited();
    const before = up.requests.length;
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      const raw = `{"model":"up/4o","messages":[{"role":"user","content":"hi"}],"${key}":{"max_tokens":1}}`;
      const r = await postJson(`${gw.url}/v1/chat/completions`, raw, { authorization: `Bearer ${k.key}` });
      expect(r.status).to.equal(400);
      expect(((await r.json()) as { error: { param: string } }).error.param).to.equal(key);
    }
    // Inside a fallback entry too.
    const raw =
      '{"model":"up/fails","messages":[{"role":"user","content":"hi"}],"fallbacks":[{"model":"up/4o","__proto__":{"max_tokens":1}}]}';
    const r = await postJson(`${gw.url}/v1/chat/completions`, raw, { authorization: `Bearer ${k.key}` });
    expect(r.status).to.equal(400);
    expect(up.requests.length).to.equal(before);
    expect(await books(gw, k, [])).to.equal(0);
  });

  it("metadata beyond OpenAI's rule (deep, many keys, long values) is a 400 naming metadata, nothing reserved", async () => {
    const k = await limited();
    const deep = `${'{"a":'.repeat(5000)}"x"${'}'.repeat(5000)}`;
    const many = Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v']));
    for (const metadata of [
      deep,
      JSON.stringify(many),
      JSON.stringify({ k: 'x'.repeat(513) }),
      JSON.stringify({ ['k'.repeat(65)]: 'v' }),
    ]) {
      const raw = `{"model":"up/4o","messages":[{"role":"user","content":"hi"}],"metadata":${metadata}}`;
      const r = await postJson(`${gw.url}/v1/chat/completions`, raw, { authorization: `Bearer ${k.key}` });
      expect(r.status).to.equal(400);
      expect(((await r.json()) as { error: { param: string } }).error.param).to.match(/^metadata/);
    }
    const good = await hammer(
      k,
      () => ({ model: 'up/4o', max_tokens: 5, messages: user('hi'), metadata: { run: '7', team: 'red' } }),
      3,
    );
    expect(ok(good.statuses)).to.equal(3);
    await books(gw, k, good.costs);
  });

  it('an upstream that over-reports or reports absurd usage: charge capped at the reservation, overrun recorded, counted, logged; no 500', async () => {
    for (const lie of ['huge', 'negative', 'inf', 'string']) {
      const k = await limited();
      const { costs, statuses, bodies } = await hammer(
        k,
        () => ({ model: `up/liar-${lie}`, max_tokens: 20, messages: user('hi') }),
        5,
      );
      expect(ok(statuses), lie).to.equal(5);
      const usage = await books(gw, k, costs);
      expect(usage).to.be.greaterThan(0); // no credit back
      const id = (bodies[0] as { id: string }).id;
      const g = await adminCall(gw, 'GET', `/v1/generation?id=${id}`, undefined, k.key);
      const overrun = (g.body.data as { overrun: { credits: number; reason: string } | null }).overrun;
      expect(overrun?.reason, lie).to.equal(lie === 'huge' ? 'usage_above_bound' : 'malformed_usage');
      // The next request is served.
      const next = await postJson(
        `${gw.url}/v1/chat/completions`,
        { model: 'up/4o', max_tokens: 5, messages: user('hi') },
        { authorization: `Bearer ${k.key}` },
      );
      expect(next.status).to.equal(200);
      await books(gw, k, [...costs, toNano(((await next.json()) as { usage: { cost: number } }).usage.cost)]);
    }
    const metric = await gw.services.metrics.getSingleMetricAsString('gateway_credit_overrun_total');
    expect(metric).to.match(/gateway_credit_overrun_total\{model="up\/liar-huge",reason="usage_above_bound"\} 5/);
    expect(metric).to.match(/reason="malformed_usage"\} 5/);
    expect(gw.logs.some((l) => l.includes('charge capped') && l.includes('up/liar-huge'))).to.equal(true);
  });

  it('a 200-request race with English, CJK, Thai and zalgo prompts at the worst honest count stays within the limit', async () => {
    const texts = [
      'Please summarise the following paragraph about the history of the printing press in Europe.',
      '日本語のテキストをトークン化すると、一文字が複数のトークンになることがあります。漢字とかな。',
      'ภาษาไทยไม่มีการเว้นวรรคระหว่างคำ ทำให้การตัดคำเป็นเรื่องยากสำหรับโปรแกรม',
      'Z̸̡̢̛̗̗̫͓̙̳̞̹̦̈́̊̓̈́̀̆̓̕a̷̢̛̰̙̝̯̖̳͚̜̱͎̋̇̐̾̏̐͘l̴̨̛͎̣̙̩̯̯̖̈́̓̈́̍̌͊̚g̶̛̛̘̪̬̞̗̥̟̣̀̋̽̈́͊͘ö̵̢̗̖̭̝͖̞̣̪̐̈́̈́̐̉̕',
    ];
    const k = await limited();
    const { costs, statuses } = await hammer(
      k,
      (i) => ({
        model: 'up/4o',
        max_tokens: 150,
        messages: [{ role: 'system', content: 'be brief' }, ...user(`${texts[i % 4]} (${i})`)],
      }),
      200,
    );
    expect(ok(statuses)).to.be.greaterThan(50);
    expect(statuses.filter((s) => s === 402).length).to.be.greaterThan(0);
    await books(gw, k, costs);
  });

  it("audio parts: a configured per-item maximum, else the operator's choice (refuse for limited keys, or the context length)", async () => {
    const audio = { type: 'input_audio', input_audio: { data: Buffer.alloc(3000).toString('base64'), format: 'wav' } };
    const k = await limited();
    const a = await hammer(
      k,
      (i) => ({ model: 'up/4o', max_tokens: 20, messages: user([{ type: 'text', text: `transcribe ${i}` }, audio]) }),
      80,
    );
    expect(ok(a.statuses)).to.be.within(1, 79);
    await books(gw, k, a.costs);
    const refused = await postJson(
      `${gw.url}/v1/chat/completions`,
      { model: 'up/strict', messages: user([audio]) },
      { authorization: `Bearer ${k.key}` },
    );
    expect(refused.status).to.equal(400);
    expect(((await refused.json()) as { error: { code: string; param: string } }).error).to.include({
      code: 'unbounded_item',
      param: 'messages[0].content[0]',
    });
    // Without a per-item maximum and without refuse: the prompt is reserved at the context length (1.28 credits here).
    const small = await hammer(k, () => ({ model: 'up/mini', max_tokens: 1, messages: user([audio]) }), 1);
    expect(small.statuses).to.deep.equal([402]);
    const rich = await makeAccountKey(gw, { credits: 10, limit: null });
    const served = await hammer(rich, () => ({ model: 'up/strict', max_tokens: 5, messages: user([audio]) }), 2);
    expect(ok(served.statuses)).to.equal(2);
    await books(gw, rich, served.costs);
  });

  it('long tool schemas and response_format schemas are in the reservation', async () => {
    const prop = (i: number) => [
      `field_${i}`,
      {
        type: 'string',
        description: `The ${i}th field of a very long description that keeps going on and on about what this field means`,
      },
    ];
    const tools = Array.from({ length: 10 }, (_, t) => ({
      type: 'function',
      function: {
        name: `tool_${t}`,
        description: 'A tool with a long schema',
        parameters: { type: 'object', properties: Object.fromEntries(Array.from({ length: 10 }, (_, i) => prop(i))) },
      },
    }));
    const k = await limited();
    const { costs, statuses } = await hammer(
      k,
      (i) => ({
        model: 'up/4o',
        max_tokens: 10,
        tools,
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'out', schema: { type: 'object', properties: Object.fromEntries([prop(i)]) } },
        },
        messages: user(`use a tool ${i}`),
      }),
      20,
    );
    expect(ok(statuses)).to.be.within(1, 19);
    await books(gw, k, costs);
  });

  it('n: 128 reserves every choice', async () => {
    const k = await limited();
    const { costs, statuses } = await hammer(
      k,
      () => ({ model: 'up/4o', n: 128, max_tokens: 100, messages: user('many answers please') }),
      6,
    );
    // 128 x 100 output tokens are 0.384 credits: two fit in the limit.
    expect(ok(statuses)).to.equal(2);
    await books(gw, k, costs);
  });

  it('streams (completed and cut by the client) are bounded and settle', async () => {
    const k = await limited();
    const s = await hammer(
      k,
      (i) => ({
        model: 'up/4o',
        stream: true,
        stream_options: { include_usage: true },
        max_tokens: 1000,
        messages: user(`stream ${i}`),
      }),
      40,
    );
    expect(ok(s.statuses)).to.be.within(1, 39);
    await books(gw, k, s.costs);
    const k2 = await limited(0.05);
    for (let i = 0; i < 3; i++) {
      const res = await postJson(
        `${gw.url}/v1/chat/completions`,
        { model: 'up/slow', stream: true, max_tokens: 1000, messages: user(`cut ${i}`) },
        { authorization: `Bearer ${k2.key}` },
      );
      expect(res.status).to.equal(200);
      const reader = res.body!.getReader();
      let text = '';
      while ((text.match(/data: /g) ?? []).length < 3) text += new TextDecoder().decode((await reader.read()).value);
      await reader.cancel();
      await settled(gw, k2.accountId);
    }
    await settled(gw, k2.accountId);
    const records = await gw.services.store.generations.list({ accountId: k2.accountId, limit: 10 });
    expect(records.every((g) => g.cancelled)).to.equal(true);
    await books(
      gw,
      k2,
      records.map((g) => g.cost),
    );
  });

  it('retries: a request retried twice is reserved and billed once', async () => {
    const k = await limited();
    const before = up.requests.filter((r) => (r.json as { model?: string }).model === 'flaky').length;
    const { costs, statuses } = await hammer(
      k,
      (i) => ({ model: 'up/flaky', num_retries: 2, max_tokens: 20, messages: user(`retry me ${i}`) }),
      10,
    );
    expect(ok(statuses)).to.equal(10);
    expect(up.requests.filter((r) => (r.json as { model?: string }).model === 'flaky').length - before).to.equal(30);
    await books(gw, k, costs);
    const [g] = await gw.services.store.generations.list({ accountId: k.accountId, limit: 1 });
    expect(g.promptTokens).to.be.greaterThan(0);
  });

  it('a chain with fallback after credit is refused at boot (credit would not see the plan)', async () => {
    const err = await startTestGateway(creditConfig({ plugins: ['auth', 'credit', 'fallback', 'routing'] })).then(
      (g) => g.stop().then(() => null),
      (e: unknown) => e as Error,
    );
    expect(err?.message ?? '').to.match(/'fallback' must come before 'credit'/);
  });
});
