import { expect } from 'chai';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../helpers/accounts';
import { MOCK_MODEL, postJson, startTestGateway, testConfig, type TestGateway } from '../helpers/gateway';

/** The example config's mock embeddings model. */
const EMBED_MODEL = {
  id: 'mock/embed-small',
  owned_by: 'mock',
  created: 1715367049,
  endpoints: ['embeddings'],
  pricing: { prompt: 0.00000002, completion: 0 },
  deployments: [{ provider: 'mock', model: 'mock-embed', options: { dimensions: 256 } }],
};

/** The longest /health answered while `work` ran (polled one after another), and what `work` gave. */
async function healthDuring<T>(url: string, work: Promise<T>): Promise<{ worstMs: number; result: T }> {
  let done = false;
  let worstMs = 0;
  const poll = (async () => {
    while (!done) {
      const t = performance.now();
      const r = await fetch(`${url}/health`);
      await r.text();
      worstMs = Math.max(worstMs, performance.now() - t);
    }
  })();
  try {
    return { worstMs, result: await work };
  } finally {
    done = true;
    await poll;
  }
}

function mockBounds(name: string, plugins: unknown[]) {
  describe(`the mock bounds what one request may make it produce (${name})`, function () {
    this.timeout(30000);
    let gw: TestGateway;
    let key: string;
    let accountId: string;

    before(async () => {
      gw = await startTestGateway(
        testConfig({ models: [MOCK_MODEL, EMBED_MODEL], plugins }, { GATEWAY_ADMIN_KEY: ADMIN_KEY }),
      );
      ({ key, accountId } = await makeAccountKey(gw, { credits: 1_000_000 }));
    });
    after(async () => gw?.stop());

    const post = (path: string, body: Record<string, unknown>) =>
      postJson(`${gw.url}${path}`, body, { authorization: `Bearer ${key}` });
    const embed = (inputs: number, extra: Record<string, unknown> = {}) =>
      post('/v1/embeddings', {
        model: EMBED_MODEL.id,
        input: Array.from({ length: inputs }, (_, i) => `the quick brown fox ${i}`),
        ...extra,
      });
    const chat = (extra: Record<string, unknown>, content = 'hello there') =>
      post('/v1/chat/completions', { model: MOCK_MODEL.id, messages: [{ role: 'user', content }], ...extra });
    const refused = async (res: Response, param: string) => {
      const text = await res.text();
      expect(res.status, text.slice(0, 500)).to.equal(400);
      const e = (JSON.parse(text) as { error: { type: string; param: string; code: string } }).error;
      expect(e.type).to.equal('invalid_request_error');
      expect(e.param, text).to.equal(param);
      return e;
    };
    const usage = async () =>
      ((await adminCall(gw, 'GET', `/v1/accounts/${accountId}`)).body.data as { usage: number }).usage;

    it('128 and 512 inputs x dimensions 65536: a 400 naming dimensions, at once, /health prompt, nothing charged', async () => {
      const before = await usage();
      for (const inputs of [128, 512]) {
        const t = performance.now();
        const { worstMs, result } = await healthDuring(gw.url, embed(inputs, { dimensions: 65536 }));
        const e = await refused(result, 'dimensions');
        expect(e.code).to.equal('out_of_range');
        expect(performance.now() - t, 'refused quickly').to.be.below(1000);
        expect(worstMs, '/health answered promptly meanwhile').to.be.below(250);
      }
      await refused(await embed(129, { dimensions: 4096 }), 'dimensions');
      expect(await usage(), 'nothing charged').to.equal(before);
    });

    it('within the bounds it answers: 2,048 x the model’s 256, 128 x 4,096, 64 x 8,192', async () => {
      for (const [inputs, dims] of [
        [2048, undefined],
        [128, 4096],
        [64, 8192],
      ] as const) {
        const { worstMs, result } = await healthDuring(
          gw.url,
          embed(inputs, dims === undefined ? {} : { dimensions: dims }),
        );
        const text = await result.text();
        expect(result.status, text.slice(0, 300)).to.equal(200);
        const body = JSON.parse(text) as { data: Array<{ embedding: number[] }> };
        expect(body.data).to.have.length(inputs);
        expect(body.data[0].embedding).to.have.length(dims ?? 256);
        expect(worstMs, '/health meanwhile').to.be.below(2000);
      }
    });

    it('too many choices, log probabilities and sampled values are 400s naming their field, quickly', async () => {
      const t = performance.now();
      await refused(await chat({ n: 100_000 }), 'n');
      await refused(await chat({ n: 128 }, 'word '.repeat(20_000)), 'n');
      await refused(await chat({ n: 128, stream: true }, 'word '.repeat(20_000)), 'n');
      const huge = {
        type: 'json_schema',
        json_schema: { name: 'x', schema: { type: 'object', properties: { s: { type: 'string', minLength: 1e9 } } } },
      };
      await refused(await chat({ response_format: huge }), 'response_format');
      const nested = {
        type: 'json_schema',
        json_schema: {
          name: 'x',
          schema: {
            type: 'array',
            minItems: 1000,
            items: { type: 'array', minItems: 1000, items: { type: 'array', minItems: 1000, items: { type: 'null' } } },
          },
        },
      };
      await refused(await chat({ response_format: nested }), 'response_format');
      const tool = {
        type: 'function',
        function: {
          name: 'lookup',
          parameters: {
            type: 'object',
            properties: { ids: { type: 'array', minItems: 1e12, items: { type: 'integer' } } },
          },
        },
      };
      await refused(await chat({ tools: [tool], tool_choice: 'required' }), 'tools');
      expect(performance.now() - t, 'all refused quickly').to.be.below(5000);
      // Ordinary requests still answer.
      const ok = await chat({ n: 2, logprobs: true, top_logprobs: 3 });
      expect(ok.status, await ok.clone().text()).to.equal(200);
      expect(((await ok.json()) as { choices: unknown[] }).choices).to.have.length(2);
    });
  });
}

mockBounds('the example chain: auth, params, credit, routing', ['auth', 'params', 'credit', 'routing']);
mockBounds('no params plugin: the mock holds alone', ['auth', 'credit', 'routing']);

describe('the mock alone (no params plugin) bounds inputs and log probabilities too', function () {
  this.timeout(30000);
  let gw: TestGateway;
  let key: string;
  before(async () => {
    gw = await startTestGateway(
      testConfig({ models: [MOCK_MODEL, EMBED_MODEL], plugins: ['auth', 'routing'] }, { GATEWAY_ADMIN_KEY: ADMIN_KEY }),
    );
    ({ key } = await makeAccountKey(gw, { credits: 10 }));
  });
  after(async () => gw?.stop());

  it('3,000 inputs: a 400 naming input; top_logprobs 1e6: a 400 naming top_logprobs', async () => {
    const auth = { authorization: `Bearer ${key}` };
    const r = await postJson(
      `${gw.url}/v1/embeddings`,
      { model: EMBED_MODEL.id, input: Array.from({ length: 3000 }, () => 'x') },
      auth,
    );
    expect(r.status).to.equal(400);
    expect(((await r.json()) as { error: { param: string } }).error.param).to.equal('input');
    const c = await postJson(
      `${gw.url}/v1/chat/completions`,
      { model: MOCK_MODEL.id, messages: [{ role: 'user', content: 'hi' }], logprobs: true, top_logprobs: 1e6 },
      auth,
    );
    expect(c.status).to.equal(400);
    expect(((await c.json()) as { error: { param: string } }).error.param).to.equal('top_logprobs');
  });
});
