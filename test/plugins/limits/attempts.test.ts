import { expect } from 'chai';
import { startTestGateway, testConfig, postJson, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../../helpers/accounts';
import { MockUpstream, sendJson, openaiFixtures } from '../../helpers/mock-upstream';
import { upstreamModel, upstreamProvider } from './helpers';

/**
 * The attempt rule (issue 41): every upstream attempt of a request, whichever way the client asked for it (direct,
 * `fallbacks`, `models`, /v1/responses, /v1/embeddings, retries), passes the allowlists, the model's endpoints and
 * the model and key x model limits, counted per upstream call; and one request cannot fan out without bound.
 */
describe('every attempt passes every guard (limits, endpoints, amplification)', function () {
  this.timeout(30000);
  const failing = new MockUpstream();
  const limited = new MockUpstream();
  const perKey = new MockUpstream();
  const tpmModel = new MockUpstream();
  const chatUp = new MockUpstream();
  const embedUp = new MockUpstream();
  const ups = [failing, limited, perKey, tpmModel, chatUp, embedUp];
  let gw: TestGateway;

  const post = (path: string, key: string, body: Record<string, unknown>) =>
    postJson(`${gw.url}${path}`, body, { authorization: `Bearer ${key}` });
  const chat = (key: string, body: Record<string, unknown>) =>
    post('/v1/chat/completions', key, { messages: [{ role: 'user', content: 'Hello there' }], ...body });
  const calls = (u: MockUpstream, path?: string) =>
    u.requests.filter((r) => path === undefined || r.path.endsWith(path)).length;

  /** The generation record of a request (written as the request settles: polled briefly). */
  const generation = async (id: string, key: string) => {
    for (let i = 0; i < 50; i++) {
      const g = await fetch(`${gw.url}/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${key}` } });
      if (g.status === 200)
        return ((await g.json()) as { data: { attempts: unknown[] | null; provider: string } }).data;
      await new Promise((r) => setTimeout(r, 20));
    }
    return undefined;
  };

  before(async () => {
    for (const u of ups) await u.start();
    failing.handler = (_r, res) => sendJson(res, 500, { error: { message: 'overloaded', type: 'server_error' } });
    const ok = (_r: unknown, res: Parameters<typeof sendJson>[0]) =>
      sendJson(res, 200, openaiFixtures.completion('ok'));
    limited.handler = ok;
    perKey.handler = ok;
    tpmModel.handler = ok;
    chatUp.handler = (r, res) =>
      r.path.endsWith('/embeddings')
        ? sendJson(res, 200, embeddingsBody(1))
        : sendJson(res, 200, openaiFixtures.completion('from chat'));
    embedUp.handler = (r, res) =>
      r.path.endsWith('/embeddings')
        ? sendJson(res, 200, embeddingsBody((r.json as { input: unknown[] }).input.length))
        : sendJson(res, 200, openaiFixtures.completion('an embeddings model answering chat'));
    const embeddingsModel = (id: string, provider: string) => ({
      ...upstreamModel(id, provider),
      endpoints: ['embeddings'],
    });
    gw = await startTestGateway(
      testConfig(
        {
          providers: [
            { name: 'mock', type: 'mock' },
            upstreamProvider('failing', failing),
            upstreamProvider('limited', limited),
            upstreamProvider('perkey', perKey),
            upstreamProvider('tpm', tpmModel),
            upstreamProvider('chat', chatUp),
            upstreamProvider('embed', embedUp),
          ],
          models: [
            upstreamModel('acc/failing', 'failing'),
            {
              ...upstreamModel('acc/failing-search', 'failing'),
              billed_features: { web_search: { per_request: 0.01 } },
            },
            upstreamModel('acc/limited', 'limited'),
            upstreamModel('acc/perkey', 'perkey'),
            upstreamModel('acc/tpm', 'tpm'),
            upstreamModel('acc/chat', 'chat'),
            embeddingsModel('acc/embed', 'embed'),
            embeddingsModel('acc/embed-failing', 'failing'),
          ],
          plugins: [
            'auth',
            'params',
            { fallback: { num_retries: 0, backoff_base_ms: 1, backoff_max_ms: 2 } },
            {
              limits: {
                models: { 'acc/limited': { rpm: 2 }, 'acc/tpm': { tpm: 1000 } },
                key_models: { 'acc/perkey': { rpm: 1 } },
              },
            },
            'credit',
            'routing',
          ],
        },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
  });
  after(async () => {
    await gw.stop();
    for (const u of ups) await u.stop();
  });

  it("a model's rpm counts every upstream call: direct, fallbacks, models[] and /v1/responses alike", async () => {
    const { key } = await makeAccountKey(gw);
    const direct = [];
    for (let i = 0; i < 3; i++) direct.push((await chat(key, { model: 'acc/limited' })).status);
    expect(direct).to.deep.equal([200, 200, 429]);
    const sideways = [
      () => chat(key, { model: 'acc/failing', fallbacks: ['acc/limited'] }),
      () => chat(key, { model: 'acc/failing', fallbacks: [{ model: 'acc/limited', temperature: 0.5 }] }),
      () => chat(key, { model: 'acc/failing', models: ['acc/failing', 'acc/limited'] }),
      () => post('/v1/responses', key, { model: 'acc/failing', input: 'Hello', fallbacks: ['acc/limited'] }),
      () => chat(key, { model: 'acc/failing', stream: true, fallbacks: ['acc/limited'] }),
    ];
    for (const send of sideways) {
      const res = await send();
      const text = await res.text();
      expect(res.status, text).to.equal(429);
      expect(text).to.contain('this model');
    }
    expect(calls(limited)).to.equal(2);
    expect(calls(failing)).to.equal(5); // each primary was tried; each fallback refused before the upstream
  });

  it('a refused attempt is skipped and kept in the generation record with the guard and the reason', async () => {
    const { key, hash } = await makeAccountKey(gw);
    expect(
      (
        await adminCall(gw, 'PUT', `/v1/keys/${hash}/limits`, {
          allowed_models: ['acc/failing', 'acc/chat', 'acc/embed'],
        })
      ).status,
    ).to.equal(200);
    const res = await chat(key, { model: 'acc/failing', fallbacks: ['acc/embed', 'acc/chat'] });
    expect(res.status).to.equal(200);
    expect(res.headers.get('x-gateway-attempts')).to.equal('2'); // upstream calls made
    const id = ((await res.json()) as { id: string }).id;
    const record = { data: await generation(id, key) };
    expect(record.data?.provider).to.equal('chat');
    expect(record.data?.attempts).to.deep.equal([
      {
        provider: 'failing',
        deployment: 'failing/gpt-4o-mini',
        model: 'acc/failing',
        status: 'error',
        code: 'upstream_error',
      },
      {
        provider: 'embed',
        deployment: 'embed/gpt-4o-mini',
        model: 'acc/embed',
        status: 'skipped',
        code: 'model_endpoint_mismatch',
        guard: 'gateway',
      },
      { provider: 'chat', deployment: 'chat/gpt-4o-mini', model: 'acc/chat', status: 'ok' },
    ]);
    // A model outside the key's allowlist named as a fallback: never called, no credit reserved for it, logged.
    const before = calls(limited);
    const denied = await chat(key, { model: 'acc/chat', fallbacks: ['acc/limited'] });
    expect(denied.status).to.equal(200);
    const deniedId = ((await denied.json()) as { id: string }).id;
    expect(calls(limited)).to.equal(before);
    const log = await generation(deniedId, key);
    expect(log?.attempts).to.deep.equal([
      {
        provider: 'limited',
        deployment: 'limited/gpt-4o-mini',
        model: 'acc/limited',
        status: 'skipped',
        code: 'model_not_allowed',
        guard: 'limits',
      },
      { provider: 'chat', deployment: 'chat/gpt-4o-mini', model: 'acc/chat', status: 'ok' },
    ]);
  });

  it('a fallback without a price for a billed parameter is never sent it', async () => {
    const { key } = await makeAccountKey(gw);
    const before = calls(chatUp);
    const res = await chat(key, { model: 'acc/failing-search', web_search_options: {}, fallbacks: ['acc/chat'] });
    expect(res.status).to.equal(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).to.equal('parameter_not_priced');
    expect(calls(chatUp)).to.equal(before);
  });

  it('a key x model limit holds through fallbacks; another key has its own', async () => {
    const a = await makeAccountKey(gw);
    const b = await makeAccountKey(gw);
    expect((await chat(a.key, { model: 'acc/perkey' })).status).to.equal(200);
    for (let i = 0; i < 3; i++)
      expect((await chat(a.key, { model: 'acc/failing', fallbacks: ['acc/perkey'] })).status).to.equal(429);
    expect(calls(perKey)).to.equal(1);
    expect((await chat(b.key, { model: 'acc/failing', fallbacks: ['acc/perkey'] })).status).to.equal(200);
    expect(calls(perKey)).to.equal(2);
  });

  it("tokens per minute count each attempt's own max_tokens (a fallback entry's included)", async () => {
    const { key, hash } = await makeAccountKey(gw);
    // The model's own tokens/min: the fallback entry asks for 3,000 tokens on a model allowed 1,000.
    const res = await chat(key, {
      model: 'acc/failing',
      max_tokens: 1,
      fallbacks: [{ model: 'acc/tpm', max_tokens: 3000 }],
    });
    expect(res.status).to.equal(429);
    expect(await res.text()).to.match(/more than the 1000 tokens per minute/);
    expect(calls(tpmModel)).to.equal(0);
    expect((await chat(key, { model: 'acc/tpm', max_tokens: 10 })).status).to.equal(200);
    // The key's own tokens/min: refused up front for the plan's largest attempt, before any upstream call.
    expect((await adminCall(gw, 'PUT', `/v1/keys/${hash}/limits`, { rate_limits: { tpm: 1000 } })).status).to.equal(
      200,
    );
    const before = calls(chatUp) + calls(failing);
    const big = await chat(key, {
      model: 'acc/failing',
      max_tokens: 1,
      fallbacks: [{ model: 'acc/chat', max_tokens: 3000 }],
    });
    expect(big.status).to.equal(429);
    expect(calls(chatUp) + calls(failing)).to.equal(before);
    expect((await chat(key, { model: 'acc/chat', max_tokens: 10 })).status).to.equal(200);
  });

  it('embeddings count their tokens against tokens per minute', async () => {
    const { key, hash } = await makeAccountKey(gw);
    expect((await adminCall(gw, 'PUT', `/v1/keys/${hash}/limits`, { rate_limits: { tpm: 5000 } })).status).to.equal(
      200,
    );
    // ~2,000 bytes bound each; the upstream reports 1,800 tokens used.
    embedUp.handler = (_r, res) =>
      sendJson(res, 200, { ...embeddingsBody(1), usage: { prompt_tokens: 1800, total_tokens: 1800 } });
    const input = 'tokens '.repeat(280);
    const statuses = [];
    for (let i = 0; i < 3; i++)
      statuses.push((await post('/v1/embeddings', key, { model: 'acc/embed', input })).status);
    expect(statuses).to.deep.equal([200, 200, 429]);
  });

  it('a request cannot fan out: num_retries and fallbacks are capped (400 naming the field), upstream calls stop at max_attempts', async () => {
    const { key } = await makeAccountKey(gw);
    const before = calls(failing);
    const retries = await chat(key, { model: 'acc/failing', num_retries: 10 });
    expect(retries.status).to.equal(400);
    expect(((await retries.json()) as { error: { param: string } }).error.param).to.equal('num_retries');
    const many = await chat(key, { model: 'acc/failing', fallbacks: Array(30).fill('acc/failing') });
    expect(many.status).to.equal(400);
    expect(((await many.json()) as { error: { param: string } }).error.param).to.equal('fallbacks');
    expect(calls(failing)).to.equal(before);
    const most = await chat(key, { model: 'acc/failing', num_retries: 5, fallbacks: Array(5).fill('acc/failing') });
    expect(most.status).to.equal(502);
    expect(calls(failing) - before).to.equal(10); // 6 x 6 = 36 planned, 10 made
  });

  it("a fallback on another endpoint's model is never called on the wrong path", async () => {
    const { key } = await makeAccountKey(gw);
    // The primary failed, the fallback was refused: the refusal says why nothing else was tried.
    const chatToEmbed = await chat(key, { model: 'acc/failing', fallbacks: ['acc/embed'] });
    expect(chatToEmbed.status).to.equal(400);
    expect(((await chatToEmbed.json()) as { error: { code: string } }).error.code).to.equal('model_endpoint_mismatch');
    expect(calls(embedUp, '/chat/completions')).to.equal(0);
    const embedToChat = await post('/v1/embeddings', key, {
      model: 'acc/embed-failing',
      input: 'hello',
      fallbacks: ['acc/chat'],
    });
    expect(embedToChat.status).to.equal(400);
    expect(calls(chatUp, '/embeddings')).to.equal(0);
  });
});

function embeddingsBody(n: number) {
  return {
    object: 'list',
    model: 'text-embedding-3-small',
    data: Array.from({ length: n }, (_, index) => ({ object: 'embedding', index, embedding: [0.6, 0.8] })),
    usage: { prompt_tokens: 2, total_tokens: 2 },
  };
}
