import { expect } from 'chai';
import { MOCK_MODEL, postJson, startTestGateway, testConfig, type TestGateway } from '../../helpers/gateway';

const SKIPPED = 'mock/skipped';
const PRIVATE = 'mock/private';
const EMBED = 'mock/embed';

/**
 * The storage plugin's step on its own (no auth, no credit): what it stores, when, and for which operation. A plain
 * completion is stored before its answer goes out; a disabled model's and an embedding never are; a responses
 * request is stored through the endpoint's saver, without content for a no-content model.
 */
describe('storage middleware', () => {
  let gw: TestGateway;
  const stored = async () =>
    Number((await gw.services.store.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM responses'))!.n);
  const get = (path: string) => fetch(`${gw.url}${path}`);

  before(async () => {
    const model = (id: string, extra: Record<string, unknown> = {}) => ({
      id,
      deployments: [{ provider: 'mock', model: id.slice(5) }],
      ...extra,
    });
    gw = await startTestGateway(
      testConfig({
        models: [MOCK_MODEL, model(SKIPPED), model(PRIVATE), model(EMBED, { endpoints: ['embeddings'] })],
        plugins: [{ storage: { disabled_models: [SKIPPED], no_content_models: [PRIVATE] } }, 'routing'],
      }),
    );
  });
  after(() => gw?.stop());

  it('without credit, a plain completion is stored by the time its answer arrives; a disabled model is not', async () => {
    const ask = { messages: [{ role: 'user', content: 'keep this' }] };
    const kept = (await (await postJson(`${gw.url}/v1/chat/completions`, { ...ask, model: MOCK_MODEL.id })).json()) as {
      id: string;
      choices: Array<{ message: { content: string } }>;
    };
    const r = await get(`/responses/${kept.id}`);
    expect(r.status).to.equal(200);
    const body = (await r.json()) as { status: string; output: Array<{ content: Array<{ text: string }> }> };
    expect(body.status).to.equal('completed');
    expect(body.output[0].content[0].text).to.equal(kept.choices[0].message.content);

    const before = await stored();
    const skipped = (await (await postJson(`${gw.url}/v1/chat/completions`, { ...ask, model: SKIPPED })).json()) as {
      id: string;
    };
    expect((await get(`/responses/${skipped.id}`)).status).to.equal(404);
    expect(await stored()).to.equal(before);
  });

  it("a chat request's large inline image is kept as its type and size, not its data; a small one as it came", async () => {
    const image = Buffer.alloc(3 * 1024 * 1024, 7).toString('base64');
    const pixel =
      'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const content = [
      { type: 'text', text: 'What is in these?' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${image}`, detail: 'low' } },
      { type: 'image_url', image_url: { url: pixel } },
    ];
    const res = await postJson(`${gw.url}/v1/chat/completions`, {
      model: MOCK_MODEL.id,
      messages: [{ role: 'user', content }],
    });
    expect(res.status).to.equal(200);
    const { id } = (await res.json()) as { id: string };
    const row = await gw.services.store.db.get<{ body: string }>('SELECT body FROM responses WHERE id = ?', [id]);
    expect(row!.body.length).to.be.below(2000);
    const kept = (JSON.parse(row!.body) as { request_messages: Array<{ content: unknown[] }> }).request_messages;
    expect(kept[0].content).to.deep.equal([
      content[0],
      {
        type: 'image_url',
        image_url: { url: 'data:image/png;base64,', detail: 'low', omitted_bytes: 3 * 1024 * 1024 },
      },
      content[2],
    ]);
  });

  it('an embeddings request stores nothing', async () => {
    const before = await stored();
    const res = await postJson(`${gw.url}/v1/embeddings`, { model: EMBED, input: 'hello' });
    expect(res.status).to.equal(200);
    expect(await stored()).to.equal(before);
  });

  it('a responses request is stored through the saver; store: false is not; a no-content model keeps no content', async () => {
    const ask = async (body: Record<string, unknown>) => {
      const res = await postJson(`${gw.url}/v1/responses`, { input: 'remember me', ...body });
      expect(res.status).to.equal(200);
      return (await res.json()) as { id: string; output: unknown[] };
    };
    const kept = await ask({ model: MOCK_MODEL.id });
    const got = (await (await get(`/v1/responses/${kept.id}`)).json()) as { output: unknown[] };
    expect(got.output).to.deep.equal(kept.output);
    const items = (await (await get(`/v1/responses/${kept.id}/input_items`)).json()) as { data: unknown[] };
    expect(items.data).to.have.length(1);

    const unstored = await ask({ model: MOCK_MODEL.id, store: false });
    expect((await get(`/v1/responses/${unstored.id}`)).status).to.equal(404);

    const hidden = await ask({ model: PRIVATE });
    const bare = (await (await get(`/v1/responses/${hidden.id}`)).json()) as {
      output: unknown[];
      content_stored: boolean;
    };
    expect(bare.output).to.deep.equal([]);
    expect(bare.content_stored).to.equal(false);
    expect(
      ((await (await get(`/v1/responses/${hidden.id}/input_items`)).json()) as { data: unknown[] }).data,
    ).to.deep.equal([]);
  });
});
