import { expect } from 'chai';
import OpenAI from 'openai';
import { startTestGateway, postJson, type TestGateway } from '../helpers/gateway';
import { MockUpstream } from '../helpers/mock-upstream';
import { adminCall, makeAccountKey } from '../helpers/accounts';
import { fromNano } from '../../src/store/money';
import { mockVector } from '../../src/providers/mock/embeddings';
import { CHAT_MODEL, EMBED_MODEL, operationsConfig, startOperationsSdk } from '../responses/helpers';
import { keyedClient, sdkClient } from '../helpers/sdk';

function floats(b64: string): number[] {
  const buf = Buffer.from(b64, 'base64');
  const out: number[] = [];
  for (let i = 0; i < buf.length; i += 4) out.push(buf.readFloatLE(i));
  return out;
}

describe('POST /v1/embeddings with the openai SDK', () => {
  let gw: TestGateway;
  let client: OpenAI;
  let key: string;
  before(async () => ({ gw, key, client } = await startOperationsSdk()));
  after(() => gw.stop());

  it('embeds one input as floats, with usage, cost and a generation record', async () => {
    const { key, accountId, client } = await keyedClient(gw, { credits: 1 });
    const r = await client.embeddings.create({ model: EMBED_MODEL, input: 'hello world', encoding_format: 'float' });
    expect(r.object).to.equal('list');
    expect(r.model).to.equal(EMBED_MODEL);
    expect(r.data).to.have.length(1);
    expect(r.data[0]).to.include({ object: 'embedding', index: 0 });
    expect(r.data[0].embedding).to.deep.equal(mockVector('hello world', 16));
    const u = r.usage as OpenAI.CreateEmbeddingResponse.Usage & { cost: number };
    expect(u).to.include({ prompt_tokens: 2, total_tokens: 2 });
    expect(u.cost).to.equal(fromNano(2 * 1000));
    const credits = await adminCall(gw, 'GET', '/v1/credits', undefined, key);
    expect(credits.body.data).to.deep.equal({ total_credits: 1, total_usage: u.cost });
    const [g] = await gw.services.store.generations.list({ accountId, limit: 5 });
    expect(g).to.include({
      model: EMBED_MODEL,
      provider: 'mock',
      promptTokens: 2,
      completionTokens: 0,
      status: 'completed',
      streamed: false,
    });
    expect(fromNano(g.cost)).to.equal(u.cost);
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).to.match(/gateway_tokens_total\{model="mock\/embed",type="prompt"\} [1-9]/);
  });

  it('embeds a batch; base64 (the SDK default) decodes to the same floats; dimensions honoured', async () => {
    const input = ['first text', 'second text', 'third'];
    const asFloat = await client.embeddings.create({
      model: EMBED_MODEL,
      input,
      encoding_format: 'float',
      dimensions: 8,
    });
    expect(asFloat.data.map((d) => d.index)).to.deep.equal([0, 1, 2]);
    for (const [i, d] of asFloat.data.entries()) expect(d.embedding).to.deep.equal(mockVector(input[i], 8));
    // Without encoding_format the SDK asks for base64 and decodes it itself.
    const viaSdk = await client.embeddings.create({ model: EMBED_MODEL, input, dimensions: 8 });
    for (const [i, d] of viaSdk.data.entries()) {
      expect(d.embedding).to.have.length(8);
      d.embedding.forEach((x, k) => expect(x).to.be.closeTo(asFloat.data[i].embedding[k], 1e-6));
    }
    const raw = await postJson(
      `${gw.url}/v1/embeddings`,
      { model: EMBED_MODEL, input, encoding_format: 'base64', dimensions: 8 },
      { authorization: `Bearer ${key}` },
    );
    const body = (await raw.json()) as { data: Array<{ embedding: string }> };
    expect(body.data[1].embedding).to.be.a('string');
    floats(body.data[1].embedding).forEach((x, k) => expect(x).to.be.closeTo(asFloat.data[1].embedding[k], 1e-6));
  });

  it('takes token arrays', async () => {
    const r = await client.embeddings.create({
      model: EMBED_MODEL,
      input: [
        [1, 2, 3],
        [4, 5],
      ],
      encoding_format: 'float',
    });
    expect(r.data).to.have.length(2);
    expect(r.usage.prompt_tokens).to.equal(5);
  });

  it('400 naming the model when it does not serve the endpoint, both ways', async () => {
    const e1 = await client.embeddings.create({ model: CHAT_MODEL, input: 'x' }).catch((e: unknown) => e);
    expect(e1).to.be.instanceOf(OpenAI.BadRequestError);
    expect((e1 as InstanceType<typeof OpenAI.BadRequestError>).code).to.equal('model_endpoint_mismatch');
    expect((e1 as Error).message).to.include(CHAT_MODEL);
    const e2 = await client.chat.completions
      .create({ model: EMBED_MODEL, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect((e2 as InstanceType<typeof OpenAI.BadRequestError>).code).to.equal('model_endpoint_mismatch');
    expect((e2 as Error).message).to.include(EMBED_MODEL);
    const e3 = await client.responses.create({ model: EMBED_MODEL, input: 'x' }).catch((e: unknown) => e);
    expect((e3 as InstanceType<typeof OpenAI.BadRequestError>).code).to.equal('model_endpoint_mismatch');
  });

  it('params validates the embeddings schema: 400 listing the problems', async () => {
    const res = await postJson(
      `${gw.url}/v1/embeddings`,
      { model: EMBED_MODEL, input: ['ok', ''], encoding_format: 'hex', dimensions: 0 },
      { authorization: `Bearer ${key}` },
    );
    expect(res.status).to.equal(400);
    const err = ((await res.json()) as { error: { message: string; param: string; type: string } }).error;
    expect(err.type).to.equal('invalid_request_error');
    expect(err.message).to.include('encoding_format').and.include('dimensions');
    const extra = await postJson(
      `${gw.url}/v1/embeddings`,
      { model: EMBED_MODEL, input: 'x', temperature: 1 },
      { authorization: `Bearer ${key}` },
    );
    expect(extra.status).to.equal(400);
  });

  it('402 when credit cannot cover the input bound; nothing is charged', async () => {
    const poor = await makeAccountKey(gw, { credits: 0.00001 }); // 10,000 nano: 10 bytes of input at 1,000 nano a token
    const c = sdkClient(gw, poor.key);
    const err = await c.embeddings
      .create({ model: EMBED_MODEL, input: 'this input is longer than ten bytes' })
      .catch((e: unknown) => e);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).to.equal(402);
    expect((err as InstanceType<typeof OpenAI.APIError>).code).to.equal('insufficient_account_credits');
    expect(
      ((await adminCall(gw, 'GET', '/v1/credits', undefined, poor.key)).body.data as { total_usage: number })
        .total_usage,
    ).to.equal(0);
    const ok = await c.embeddings.create({ model: EMBED_MODEL, input: 'short', encoding_format: 'float' });
    expect(ok.data).to.have.length(1);
  });

  it('402 before anything is sent to a real upstream', async () => {
    const up = await new MockUpstream().start();
    const g2 = await startTestGateway(
      operationsConfig({
        providers: [{ name: 'up', type: 'openai', api_base: up.url }],
        models: [
          {
            id: 'up/e',
            endpoints: ['embeddings'],
            pricing: { prompt: 0.001, completion: 0 },
            deployments: [{ provider: 'up', model: 'e' }],
          },
        ],
      }),
    );
    try {
      const c = new OpenAI({
        baseURL: `${g2.url}/v1`,
        apiKey: (await makeAccountKey(g2, { credits: 0.01 })).key,
        maxRetries: 0,
      });
      const err = await c.embeddings
        .create({ model: 'up/e', input: ['a long enough input to cost more than a cent'] })
        .catch((e: unknown) => e);
      expect((err as InstanceType<typeof OpenAI.APIError>).status).to.equal(402);
      expect(up.requests).to.have.length(0);
    } finally {
      await g2.stop();
      await up.stop();
    }
  });
});
