import { expect } from 'chai';
import { sseData, type TestGateway } from '../../helpers/gateway';
import { adminCall, makeAccountKey } from '../../helpers/accounts';
import type { MockUpstream } from '../../helpers/mock-upstream';
import { cacheGateway, chat, scriptedUpstream } from './helpers';

const ASK = { model: 'up/m', temperature: 0, messages: [{ role: 'user', content: 'What is 2 + 2?' }] };
const weather = {
  type: 'function',
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
};

/** The answer without what differs by request: its id, its time, the charge. */
function content(json: Record<string, unknown>) {
  const usage = { ...(json.usage as Record<string, unknown>) };
  delete usage.cost;
  return { choices: json.choices, usage, model: json.model };
}

/** A streamed answer: its chunks' choices and usage, without ids and times; and whether it ended with [DONE]. */
function streamed(text: string) {
  const data = sseData(text);
  const chunks = data
    .filter((d) => d !== '[DONE]')
    .map(
      (d) => JSON.parse(d) as { choices: Array<{ delta: Record<string, unknown> }>; usage?: unknown; object: string },
    );
  const said = chunks.map((c) => c.choices.map((ch) => ch.delta.content ?? '').join('')).join('');
  const calls = chunks.flatMap((c) => c.choices.flatMap((ch) => (ch.delta.tool_calls as unknown[]) ?? []));
  return { said, calls, done: data[data.length - 1] === '[DONE]', chunks };
}

describe('cache plugin: exact cache (SQLite store)', function () {
  this.timeout(30000);
  let up: MockUpstream;
  let gw: TestGateway;
  let key: string;

  before(async () => {
    up = await scriptedUpstream().start();
    gw = await cacheGateway(up);
    ({ key } = await makeAccountKey(gw, { credits: 10 }));
  });
  after(async () => {
    await gw?.stop();
    await up?.stop();
  });

  it('the same request twice: one upstream call, the same answer, miss then hit', async () => {
    const calls = up.requests.length;
    const a = await chat(gw, key, ASK);
    const b = await chat(gw, key, ASK);
    expect([a.status, b.status]).to.deep.equal([200, 200]);
    expect([a.cache, b.cache]).to.deep.equal(['miss', 'hit']);
    expect(up.requests.length - calls).to.equal(1);
    expect(content(b.json)).to.deep.equal(content(a.json));
    expect(b.json.id).to.not.equal(a.json.id);
    expect(b.headers.get('x-gateway-attempts')).to.equal('0');
  });

  it('a streamed request is served from the cache as a stream: same chunks, usage chunk, [DONE]', async () => {
    const ask = { ...ASK, messages: [{ role: 'user', content: 'stream me' }], stream: true };
    const withUsage = { ...ask, stream_options: { include_usage: true } };
    const calls = up.requests.length;
    const a = await chat(gw, key, withUsage);
    const b = await chat(gw, key, withUsage);
    expect([a.cache, b.cache]).to.deep.equal(['miss', 'hit']);
    expect(up.requests.length - calls).to.equal(1);
    const sa = streamed(a.text);
    const sb = streamed(b.text);
    expect(sb.said)
      .to.equal(sa.said)
      .and.match(/^answer \d+$/);
    expect(sb.done).to.equal(true);
    const usage = sb.chunks[sb.chunks.length - 1];
    expect(usage.choices).to.deep.equal([]);
    expect(usage.usage).to.deep.include({ prompt_tokens: 19, completion_tokens: 10, total_tokens: 29 });
    expect(sb.chunks.every((c) => c.object === 'chat.completion.chunk')).to.equal(true);
    // The same entry serves the plain request (a stream is stored as its assembled answer).
    const plain = await chat(gw, key, { ...ask, stream: false });
    expect(plain.cache).to.equal('hit');
    expect((plain.json.choices as Array<{ message: { content: string } }>)[0].message.content).to.equal(sa.said);
    expect(up.requests.length - calls).to.equal(1);
    // Without include_usage, no usage chunk reaches the client.
    const noUsage = await chat(gw, key, ask);
    expect(noUsage.cache).to.equal('hit');
    expect(streamed(noUsage.text).chunks.some((c) => c.usage)).to.equal(false);
  });

  it('tool calls are cached plain and streamed on a model the operator allows', async () => {
    const ask = { ...ASK, model: 'up/tools', tools: [weather], messages: [{ role: 'user', content: 'weather?' }] };
    const calls = up.requests.length;
    const a = await chat(gw, key, ask);
    const b = await chat(gw, key, ask);
    expect([a.cache, b.cache]).to.deep.equal(['miss', 'hit']);
    expect(content(b.json)).to.deep.equal(content(a.json));
    const s = await chat(gw, key, { ...ask, stream: true });
    expect(s.cache).to.equal('hit');
    const call = (a.json.choices as Array<{ message: { tool_calls: Array<Record<string, unknown>> } }>)[0].message
      .tool_calls[0];
    expect(streamed(s.text).calls).to.deep.equal([{ index: 0, ...call }]);
    expect(up.requests.length - calls).to.equal(1);
    // On a model not allowed non-deterministic requests, tools are a bypass.
    const m = await chat(gw, key, { ...ask, model: 'up/m' });
    const m2 = await chat(gw, key, { ...ask, model: 'up/m' });
    expect([m.cache, m2.cache]).to.deep.equal(['bypass', 'bypass']);
    expect(up.requests.length - calls).to.equal(3);
  });

  it('any field that changes the answer misses', async () => {
    const base = { ...ASK, messages: [{ role: 'user', content: 'vary me' }] };
    await chat(gw, key, base);
    const variants: Array<Record<string, unknown>> = [
      { ...base, messages: [{ role: 'user', content: 'vary me!' }] },
      { ...base, messages: [{ role: 'system', content: 'be brief' }, ...base.messages] },
      { ...base, model: 'up/other' },
      { ...base, max_tokens: 7 },
      { ...base, top_p: 0.5 },
      { ...base, seed: 3 },
      { ...base, stop: ['x'] },
      { ...base, presence_penalty: 0.1 },
      { ...base, response_format: { type: 'json_object' } },
      { ...base, logprobs: true },
      { ...base, model: 'up/tools', tools: [weather] },
      { ...base, model: 'up/tools', tools: [weather], tool_choice: 'required' },
    ];
    for (const v of variants) {
      const r = await chat(gw, key, v);
      expect(r.cache, JSON.stringify(v)).to.equal('miss');
    }
    // Key order and delivery fields (stream, user) do not change the answer: a hit.
    const same = await chat(gw, key, { user: 'someone', messages: base.messages, temperature: 0, model: 'up/m' });
    expect(same.cache).to.equal('hit');
    // Another endpoint is another answer: /v1/responses misses, then hits.
    const r1 = await chat(gw, key, { model: 'up/m', temperature: 0, input: 'vary me' }, {}, '/v1/responses');
    const r2 = await chat(gw, key, { model: 'up/m', temperature: 0, input: 'vary me' }, {}, '/v1/responses');
    expect([r1.status, r1.cache, r2.cache]).to.deep.equal([200, 'miss', 'hit']);
    expect(r2.json.output).to.deep.equal(
      (r1.json.output as Array<Record<string, unknown>>).map((o) => ({
        ...o,
        id: (o.id as string).replace(String(r1.json.id).slice(5), String(r2.json.id).slice(5)),
      })),
    );
  });

  it('a cached /v1/responses answer is stored and retrievable under its own id', async () => {
    const ask = { model: 'up/m', temperature: 0, input: 'store me' };
    await chat(gw, key, ask, {}, '/v1/responses');
    const hit = await chat(gw, key, ask, {}, '/v1/responses');
    expect(hit.cache).to.equal('hit');
    const got = await fetch(`${gw.url}/v1/responses/${String(hit.json.id)}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(got.status).to.equal(200);
    expect(((await got.json()) as { output: unknown }).output).to.deep.equal(hit.json.output);
  });

  it('/v1/messages (Anthropic wire) is cached too, plain and streamed, apart from chat', async () => {
    const ask = { model: 'up/m', max_tokens: 50, temperature: 0, messages: [{ role: 'user', content: 'wire?' }] };
    const headers = { 'anthropic-version': '2023-06-01' };
    const calls = up.requests.length;
    const a = await chat(gw, key, ask, headers, '/v1/messages');
    const b = await chat(gw, key, ask, headers, '/v1/messages');
    expect([a.status, a.cache, b.status, b.cache]).to.deep.equal([200, 'miss', 200, 'hit']);
    expect(b.json.content).to.deep.equal(a.json.content);
    const s = await chat(gw, key, { ...ask, stream: true }, headers, '/v1/messages');
    expect([s.status, s.cache]).to.deep.equal([200, 'hit']);
    expect(s.text).to.include('message_stop');
    // The same request on chat completions is another endpoint: a miss.
    expect((await chat(gw, key, ask)).cache).to.equal('miss');
    expect(up.requests.length - calls).to.equal(2);
  });

  it('embeddings are cached per input', async () => {
    const calls = up.requests.length;
    const a = await chat(gw, key, { model: 'up/e', input: 'embed me' }, {}, '/v1/embeddings');
    const b = await chat(gw, key, { model: 'up/e', input: 'embed me' }, {}, '/v1/embeddings');
    const c = await chat(gw, key, { model: 'up/e', input: 'embed me too' }, {}, '/v1/embeddings');
    expect([a.cache, b.cache, c.cache]).to.deep.equal(['miss', 'hit', 'miss']);
    expect(b.json.data).to.deep.equal(a.json.data);
    expect(up.requests.length - calls).to.equal(2);
  });

  it('another account never hits an entry it did not store', async () => {
    const ask = { ...ASK, messages: [{ role: 'user', content: 'mine' }] };
    await chat(gw, key, ask);
    const other = await makeAccountKey(gw, { credits: 10 });
    const r = await chat(gw, other.key, ask);
    expect(r.cache).to.equal('miss');
    // A second key of the same account shares the account's entries.
    const k2 = await adminCall(gw, 'POST', '/v1/keys', { name: 'k2', account_id: other.accountId });
    expect((await chat(gw, k2.body.key as string, ask)).cache).to.equal('hit');
  });

  it('Cache-Control: no-cache skips the read and stores; no-store neither reads nor stores', async () => {
    const ask = { ...ASK, messages: [{ role: 'user', content: 'bypass me' }] };
    const a = await chat(gw, key, ask);
    const calls = up.requests.length;
    const b = await chat(gw, key, ask, { 'cache-control': 'no-cache' });
    expect(b.cache).to.equal('bypass');
    expect(up.requests.length - calls).to.equal(1);
    // Stored again: the next request gets no-cache's answer, not the first one.
    const c = await chat(gw, key, ask);
    expect(c.cache).to.equal('hit');
    expect(content(c.json)).to.deep.equal(content(b.json)).and.not.deep.equal(content(a.json));
    const fresh = { ...ASK, messages: [{ role: 'user', content: 'never store me' }] };
    const d = await chat(gw, key, fresh, { 'cache-control': 'no-store' });
    expect(d.cache).to.equal('bypass');
    expect((await chat(gw, key, fresh)).cache).to.equal('miss');
    expect((await chat(gw, key, ask, { 'cache-control': 'no-store' })).cache).to.equal('bypass');
    expect(up.requests.length - calls).to.equal(4);
  });

  it('non-deterministic requests and excluded models bypass', async () => {
    for (const body of [
      { model: 'up/m', messages: [{ role: 'user', content: 'no temperature' }] },
      { ...ASK, temperature: 0.7 },
      { ...ASK, n: 2 },
      { ...ASK, model: 'up/off' },
    ])
      expect((await chat(gw, key, body)).cache, JSON.stringify(body)).to.equal('bypass');
  });

  it('a key or an account opted out (admin API) bypasses; opted back in, it hits', async () => {
    const k = await makeAccountKey(gw, { credits: 10 });
    const ask = { ...ASK, messages: [{ role: 'user', content: 'opt' }] };
    await chat(gw, k.key, ask);
    expect((await adminCall(gw, 'PUT', `/v1/keys/${k.hash}/cache`, { enabled: false })).status).to.equal(200);
    expect((await chat(gw, k.key, ask)).cache).to.equal('bypass');
    expect((await adminCall(gw, 'GET', `/v1/keys/${k.hash}/cache`)).body).to.deep.equal({ data: { enabled: false } });
    await adminCall(gw, 'PUT', `/v1/keys/${k.hash}/cache`, { enabled: null });
    expect((await chat(gw, k.key, ask)).cache).to.equal('hit');
    await adminCall(gw, 'PUT', `/v1/accounts/${k.accountId}/cache`, { enabled: false });
    expect((await chat(gw, k.key, ask)).cache).to.equal('bypass');
    // The key's own setting wins over its account's.
    await adminCall(gw, 'PUT', `/v1/keys/${k.hash}/cache`, { enabled: true });
    expect((await chat(gw, k.key, ask)).cache).to.equal('hit');
    expect((await adminCall(gw, 'PUT', `/v1/keys/${'0'.repeat(64)}/cache`, { enabled: true })).status).to.equal(404);
    expect((await adminCall(gw, 'PUT', `/v1/keys/${k.hash}/cache`, { enabled: 'yes' })).status).to.equal(400);
    expect((await adminCall(gw, 'PUT', `/v1/keys/${k.hash}/cache`, { enabled: true }, k.key)).status).to.equal(403);
  });

  it('the generation record names the hit and its entry', async () => {
    const ask = { ...ASK, messages: [{ role: 'user', content: 'record me' }] };
    const a = await chat(gw, key, ask);
    const b = await chat(gw, key, ask);
    const rec = async (id: unknown) =>
      (await adminCall(gw, 'GET', `/v1/generation?id=${String(id)}`)).body.data as Record<string, unknown>;
    const ra = await rec(a.json.id);
    const rb = await rec(b.json.id);
    expect(ra).to.deep.include({ cache: 'miss', cache_entry: null, provider: 'up' });
    expect(rb).to.deep.include({ cache: 'hit', provider: null, cache_similarity: null });
    expect(rb.cache_entry).to.match(/^[0-9a-f]{64}$/);
    expect(rb.tokens_prompt).to.equal(ra.tokens_prompt);
  });

  it('metrics count hits and misses per model', async () => {
    const count = async (result: string) => {
      const text = await (await fetch(`${gw.url}/metrics`)).text();
      const line = text
        .split('\n')
        .find((l) => l.startsWith(`gateway_cache_requests_total{model="up/other",result="${result}"}`));
      return line ? Number(line.split(' ').pop()) : 0;
    };
    const [hits, misses] = [await count('hit'), await count('miss')];
    const ask = { ...ASK, model: 'up/other', messages: [{ role: 'user', content: 'count me' }] };
    await chat(gw, key, ask);
    await chat(gw, key, ask);
    await chat(gw, key, ask);
    expect([(await count('hit')) - hits, (await count('miss')) - misses]).to.deep.equal([2, 1]);
  });
});
