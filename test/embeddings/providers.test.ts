import { expect } from 'chai';
import OpenAI from 'openai';
import { startTestGateway, testConfig, type TestGateway } from '../helpers/gateway';
import { MockUpstream, sendJson, type RecordedRequest } from '../helpers/mock-upstream';
import { ConfigError } from '../../src/config/load';
import { sdkClient } from '../helpers/sdk';

interface Rig {
  up: MockUpstream;
  gw: TestGateway;
  client: OpenAI;
  stop(): Promise<void>;
}

/** A loopback mock of one provider and a gateway whose embeddings model `p/e` is on it. */
async function embedRig(type: string, deploymentModel: string, provider: Record<string, unknown> = {}): Promise<Rig> {
  const up = await new MockUpstream().start();
  const gw = await startTestGateway(
    testConfig({
      providers: [{ name: 'p', type, api_base: up.url, api_key: 'sk-provider-key', ...provider }],
      models: [{ id: 'p/e', endpoints: ['embeddings'], deployments: [{ provider: 'p', model: deploymentModel }] }],
      plugins: ['params', 'routing'],
    }),
  );
  const client = sdkClient(gw, 'x');
  return { up, gw, client, stop: async () => (await gw.stop(), await up.stop()) };
}

const V1 = [0.1, 0.2, 0.3, 0.4];
const V2 = [0.5, 0.6, 0.7, 0.8];
const json = (r: RecordedRequest) => r.json as Record<string, unknown>;

async function embed(rig: Rig, input: string | string[], extra: { dimensions?: number } = {}) {
  return rig.client.embeddings.create({ model: 'p/e', input, encoding_format: 'float', ...extra });
}

function withRig(type: string, model: string, provider: Record<string, unknown>, body: (get: () => Rig) => void): void {
  describe(`embeddings provider: ${type}`, () => {
    let rig: Rig;
    before(async () => {
      rig = await embedRig(type, model, provider);
    });
    after(() => rig.stop());
    body(() => rig);
  });
}

withRig('openai', 'text-embedding-3-small', {}, (get) => {
  it('POST {api_base}/embeddings with the OpenAI body; usage from the upstream', async () => {
    get().up.enqueue((_r, res) =>
      sendJson(res, 200, {
        object: 'list',
        data: [
          { object: 'embedding', index: 1, embedding: V2 },
          { object: 'embedding', index: 0, embedding: V1 },
        ],
        model: 'text-embedding-3-small',
        usage: { prompt_tokens: 7, total_tokens: 7 },
      }),
    );
    const r = await embed(get(), ['a', 'b'], { dimensions: 4 });
    const req = get().up.requests[0];
    expect(req.path).to.equal('/embeddings');
    expect(req.headers.authorization).to.equal('Bearer sk-provider-key');
    expect(json(req)).to.deep.equal({
      model: 'text-embedding-3-small',
      input: ['a', 'b'],
      encoding_format: 'float',
      dimensions: 4,
    });
    expect(r.data.map((d) => d.embedding)).to.deep.equal([V1, V2]);
    expect(r.usage).to.deep.equal({ prompt_tokens: 7, total_tokens: 7 });
  });

  it('maps an upstream error to the OpenAI error object', async () => {
    get().up.enqueue((_r, res) =>
      sendJson(res, 400, {
        error: {
          message: 'This model does not support specifying dimensions.',
          type: 'invalid_request_error',
          param: null,
          code: null,
        },
      }),
    );
    const err = await embed(get(), 'x', { dimensions: 3 }).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect((err as Error).message).to.include('does not support specifying dimensions');
  });
});

withRig('azure', 'my-embedding-deployment', { options: { api_version: '2024-10-21' } }, (get) => {
  it('POST /openai/deployments/{deployment}/embeddings?api-version=..., api-key header, no model in the body', async () => {
    get().up.enqueue((_r, res) =>
      sendJson(res, 200, {
        object: 'list',
        data: [{ object: 'embedding', index: 0, embedding: V1 }],
        model: 'text-embedding-3-small',
        usage: { prompt_tokens: 2, total_tokens: 2 },
      }),
    );
    const r = await embed(get(), 'hello');
    const req = get().up.requests[0];
    expect(req.path).to.equal('/openai/deployments/my-embedding-deployment/embeddings?api-version=2024-10-21');
    expect(req.headers['api-key']).to.equal('sk-provider-key');
    expect(json(req)).to.deep.equal({ input: ['hello'], encoding_format: 'float' });
    expect(r.data[0].embedding).to.deep.equal(V1);
  });
});

withRig('gemini', 'gemini-embedding-001', {}, (get) => {
  it('one input: models/{m}:embedContent; the gateway counts the tokens', async () => {
    get().up.enqueue((_r, res) => sendJson(res, 200, { embedding: { values: V1 } }));
    const r = await embed(get(), 'hello world', { dimensions: 4 });
    const req = get().up.requests[0];
    expect(req.path).to.equal('/v1beta/models/gemini-embedding-001:embedContent');
    expect(req.headers['x-goog-api-key']).to.equal('sk-provider-key');
    expect(json(req)).to.deep.equal({ content: { parts: [{ text: 'hello world' }] }, outputDimensionality: 4 });
    expect(r.data[0].embedding).to.deep.equal(V1);
    expect(r.usage.prompt_tokens).to.equal(2);
  });

  it('several inputs: models/{m}:batchEmbedContents, one request per input', async () => {
    get().up.enqueue((_r, res) => sendJson(res, 200, { embeddings: [{ values: V1 }, { values: V2 }] }));
    const r = await embed(get(), ['a', 'b']);
    const req = get().up.requests[1];
    expect(req.path).to.equal('/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(json(req)).to.deep.equal({
      requests: [
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'a' }] } },
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'b' }] } },
      ],
    });
    expect(r.data.map((d) => d.embedding)).to.deep.equal([V1, V2]);
  });

  it('refuses token arrays with a 400 before calling the upstream', async () => {
    const n = get().up.requests.length;
    const err = await get()
      .client.embeddings.create({ model: 'p/e', input: [[1, 2, 3]] })
      .catch((e: unknown) => e);
    expect(err).to.be.instanceOf(OpenAI.BadRequestError);
    expect(get().up.requests.length).to.equal(n);
  });
});

withRig('mistral', 'mistral-embed', {}, (get) => {
  it('POST /v1/embeddings {model, input}; output_dimension for dimensions; OpenAI-shaped answer', async () => {
    get().up.enqueue((_r, res) =>
      sendJson(res, 200, {
        id: 'emb-1',
        object: 'list',
        data: [
          { object: 'embedding', embedding: V1, index: 0 },
          { object: 'embedding', embedding: V2, index: 1 },
        ],
        model: 'mistral-embed',
        usage: { prompt_tokens: 6, total_tokens: 6, completion_tokens: 0 },
      }),
    );
    const r = await embed(get(), ['x', 'y'], { dimensions: 4 });
    const req = get().up.requests[0];
    expect(req.path).to.equal('/v1/embeddings');
    expect(req.headers.authorization).to.equal('Bearer sk-provider-key');
    expect(json(req)).to.deep.equal({ model: 'mistral-embed', input: ['x', 'y'], output_dimension: 4 });
    expect(r.data.map((d) => d.embedding)).to.deep.equal([V1, V2]);
    expect(r.usage.prompt_tokens).to.equal(6);
  });
});

withRig('cohere', 'embed-v4.0', { options: { input_type: 'search_query' } }, (get) => {
  it('POST /v2/embed {texts, input_type, embedding_types}; billed input tokens', async () => {
    get().up.enqueue((_r, res) =>
      sendJson(res, 200, {
        id: 'e1',
        embeddings: { float: [V1, V2] },
        texts: ['x', 'y'],
        meta: { api_version: { version: '2' }, billed_units: { input_tokens: 3 } },
        response_type: 'embeddings_by_type',
      }),
    );
    const r = await embed(get(), ['x', 'y'], { dimensions: 4 });
    const req = get().up.requests[0];
    expect(req.path).to.equal('/v2/embed');
    expect(req.headers.authorization).to.equal('Bearer sk-provider-key');
    expect(json(req)).to.deep.equal({
      model: 'embed-v4.0',
      texts: ['x', 'y'],
      input_type: 'search_query',
      embedding_types: ['float'],
      output_dimension: 4,
    });
    expect(r.data.map((d) => d.embedding)).to.deep.equal([V1, V2]);
    expect(r.usage.prompt_tokens).to.equal(3);
  });
});

withRig('ollama', 'nomic-embed-text', {}, (get) => {
  it('POST /api/embed {model, input}; prompt_eval_count as usage', async () => {
    get().up.enqueue((_r, res) =>
      sendJson(res, 200, {
        model: 'nomic-embed-text',
        embeddings: [V1, V2],
        total_duration: 14143917,
        load_duration: 1019500,
        prompt_eval_count: 8,
      }),
    );
    const r = await embed(get(), ['why is the sky blue?', 'why is the grass green?']);
    const req = get().up.requests[0];
    expect(req.path).to.equal('/api/embed');
    expect(json(req)).to.deep.equal({
      model: 'nomic-embed-text',
      input: ['why is the sky blue?', 'why is the grass green?'],
    });
    expect(r.data.map((d) => d.embedding)).to.deep.equal([V1, V2]);
    expect(r.usage.prompt_tokens).to.equal(8);
  });
});

withRig(
  'bedrock',
  'amazon.titan-embed-text-v2:0',
  { api_key: 'AKIDEXAMPLE:secret', options: { region: 'eu-west-1' } },
  (get) => {
    it('Titan: one signed InvokeModel per input, token counts summed, order kept', async () => {
      get().up.handler = (r, res) => {
        const text = (r.json as { inputText: string }).inputText;
        sendJson(res, 200, {
          embedding: text === 'first' ? V1 : V2,
          inputTextTokenCount: text.length,
          embeddingsByType: { float: text === 'first' ? V1 : V2 },
        });
      };
      const r = await embed(get(), ['first', 'second!'], { dimensions: 256 });
      const reqs = get().up.requests;
      expect(reqs).to.have.length(2);
      for (const req of reqs) {
        expect(req.path).to.equal('/model/amazon.titan-embed-text-v2%3A0/invoke');
        expect(String(req.headers.authorization)).to.match(
          /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/bedrock\/aws4_request/,
        );
      }
      expect(reqs.map(json).sort((a, b) => String(a.inputText).localeCompare(String(b.inputText)))).to.deep.equal([
        { inputText: 'first', dimensions: 256, normalize: true },
        { inputText: 'second!', dimensions: 256, normalize: true },
      ]);
      expect(r.data.map((d) => d.embedding)).to.deep.equal([V1, V2]);
      expect(r.usage.prompt_tokens).to.equal(12);
    });
  },
);

withRig('bedrock', 'cohere.embed-english-v3', { api_key: 'AKIDEXAMPLE:secret' }, (get) => {
  it('Cohere on Bedrock: one InvokeModel for the batch; tokens from X-Amzn-Bedrock-Input-Token-Count', async () => {
    get().up.enqueue((_r, res) =>
      sendJson(
        res,
        200,
        { id: 'b1', embeddings: { float: [V1, V2] }, texts: ['a', 'b'], response_type: 'embeddings_by_type' },
        { 'X-Amzn-Bedrock-Input-Token-Count': '5' },
      ),
    );
    const r = await embed(get(), ['a', 'b']);
    const req = get().up.requests[0];
    expect(req.path).to.equal('/model/cohere.embed-english-v3/invoke');
    expect(json(req)).to.deep.equal({ texts: ['a', 'b'], input_type: 'search_document', embedding_types: ['float'] });
    expect(r.data.map((d) => d.embedding)).to.deep.equal([V1, V2]);
    expect(r.usage.prompt_tokens).to.equal(5);
  });
});

describe('embeddings provider: anthropic', () => {
  it('the config refuses an embeddings model on a provider type without an embeddings API, naming both', () => {
    let problems: Array<{ pointer: string; message: string }> = [];
    try {
      testConfig({
        providers: [{ name: 'claude', type: 'anthropic', api_key: 'k' }],
        models: [{ id: 'c/e', endpoints: ['embeddings'], deployments: [{ provider: 'claude', model: 'claude-x' }] }],
      });
    } catch (e) {
      expect(e).to.be.instanceOf(ConfigError);
      problems = (e as ConfigError).problems;
    }
    expect(problems).to.deep.equal([
      {
        pointer: '/models/0/deployments/0/provider',
        message: "model 'c/e' serves embeddings, but provider 'claude' (type anthropic) has no embeddings endpoint",
      },
    ]);
  });

  it('the config refuses an embeddings model whose fallback serves only chat', () => {
    let problems: Array<{ pointer: string; message: string }> = [];
    try {
      testConfig({
        models: [
          {
            id: 'm/e',
            endpoints: ['embeddings'],
            routing: { fallbacks: ['m/chat'] },
            deployments: [{ provider: 'mock', model: 'e' }],
          },
          { id: 'm/chat', deployments: [{ provider: 'mock', model: 'c' }] },
        ],
      });
    } catch (e) {
      problems = (e as ConfigError).problems;
    }
    expect(problems).to.deep.equal([
      {
        pointer: '/models/0/routing/fallbacks',
        message: "model 'm/e' serves embeddings, but its fallback 'm/chat' does not",
      },
    ]);
  });
});
