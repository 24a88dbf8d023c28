import { expect } from 'chai';
import OpenAI from 'openai';
import { startTestGateway, testConfig, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, makeAccountKey } from '../../helpers/accounts';
import { freshPostgresUrl, POSTGRES_URL } from '../../helpers/postgres';
import { keyedClient } from '../../helpers/sdk';

const MODEL = 'mock/gpt-4o-mini';
const weather = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

type Problem = { type: string; title: string; status: number; detail: string };

async function getResponse(
  gw: TestGateway,
  id: string,
  key?: string,
  method = 'GET',
): Promise<{ status: number; type: string | null; body: Record<string, unknown> }> {
  const res = await fetch(`${gw.url}/responses/${id}`, {
    method,
    headers: key ? { authorization: `Bearer ${key}` } : {},
  });
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    body: (await res.json()) as Record<string, unknown>,
  };
}

function storageSuite(name: string, store: () => Promise<Record<string, unknown>>) {
  describe(`stored responses (${name})`, () => {
    let gw: TestGateway;
    let key: string;
    let client: OpenAI;
    before(async function () {
      const s = await store();
      if (!s.driver) {
        console.warn('    ! GATEWAY_TEST_POSTGRES_URL is not set; stored responses on PostgreSQL did not run');
        this.skip();
      }
      gw = await startTestGateway(
        testConfig({ store: s, plugins: ['auth', 'credit', 'storage', 'routing'] }, { GATEWAY_ADMIN_KEY: ADMIN_KEY }),
      );
      ({ key, client } = await keyedClient(gw, { credits: 10 }));
    });
    after(() => gw?.stop());

    it('stores a plain completion under its id: GET returns what the client saw', async () => {
      const c = await client.chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: 'Remember this' }],
      });
      const r = await getResponse(gw, c.id, key);
      expect(r.status).to.equal(200);
      expect(r.body).to.deep.include({ id: c.id, object: 'response', model: MODEL, status: 'completed' });
      expect(r.body.output).to.deep.equal([
        {
          type: 'message',
          id: `msg_${c.id.slice(9)}_0`,
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: c.choices[0].message.content, annotations: [] }],
        },
      ]);
      expect((r.body.usage as { input_tokens: number; output_tokens: number }).output_tokens).to.equal(
        c.usage?.completion_tokens,
      );
      expect(r.body.created_at).to.be.a('number');
    });

    it('assembles a streamed completion from its chunks', async () => {
      const stream = await client.chat.completions.create({
        model: MODEL,
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'stream and store' }],
      });
      let id = '';
      let text = '';
      for await (const ch of stream) {
        id = ch.id;
        text += ch.choices[0]?.delta.content ?? '';
      }
      const r = await getResponse(gw, id, key);
      expect(r.body.status).to.equal('completed');
      expect((r.body.output as Array<{ content: Array<{ text: string }> }>)[0].content[0].text).to.equal(text);
    });

    it('stores tool calls as function_call items, plain and streamed', async () => {
      const c = await client.chat.completions.create({
        model: MODEL,
        tools: [weather],
        messages: [{ role: 'user', content: 'get_weather please' }],
      });
      const call = c.choices[0].message.tool_calls![0] as { id: string; function: { name: string; arguments: string } };
      const r = await getResponse(gw, c.id, key);
      expect(r.body.output).to.deep.equal([
        {
          type: 'function_call',
          id: `fc_${c.id.slice(9)}_0_0`,
          call_id: call.id,
          name: 'get_weather',
          arguments: call.function.arguments,
          status: 'completed',
        },
      ]);
      const stream = await client.chat.completions.create({
        model: MODEL,
        stream: true,
        tools: [weather],
        messages: [{ role: 'user', content: 'get_weather please' }],
      });
      let id = '';
      for await (const ch of stream) id = ch.id;
      const s = await getResponse(gw, id, key);
      expect((s.body.output as Array<{ type: string; name: string; arguments: string }>)[0]).to.include({
        type: 'function_call',
        name: 'get_weather',
        arguments: '{"city":"mock city"}',
      });
    });

    it('stores n=2 as one message item per choice', async () => {
      const c = await client.chat.completions.create({
        model: MODEL,
        n: 2,
        messages: [{ role: 'user', content: 'two' }],
      });
      const r = await getResponse(gw, c.id, key);
      expect((r.body.output as Array<{ id: string }>).map((o) => o.id)).to.deep.equal([
        `msg_${c.id.slice(9)}_0`,
        `msg_${c.id.slice(9)}_1`,
      ]);
    });

    it('DELETE removes it (then 404); errors are problem+json: 400 malformed id, 401 no key, 404 another account', async () => {
      const c = await client.chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: 'to delete' }],
      });
      const other = await makeAccountKey(gw);
      const foreign = await getResponse(gw, c.id, other.key);
      expect(foreign.status).to.equal(404);
      expect(foreign.type).to.match(/^application\/problem\+json/);
      expect(foreign.body as unknown as Problem).to.include({ status: 404, title: 'Not Found' });
      expect((await getResponse(gw, c.id, other.key, 'DELETE')).status).to.equal(404);
      const noKey = await getResponse(gw, c.id);
      expect(noKey.status).to.equal(401);
      expect(noKey.type).to.match(/^application\/problem\+json/);
      expect(Object.keys(noKey.body)).to.include.members(['type', 'title', 'status', 'detail']);
      const bad = await getResponse(gw, 'not-an-id!', key);
      expect(bad.status).to.equal(400);
      expect((bad.body as unknown as Problem).type).to.be.a('string');
      expect((await getResponse(gw, c.id, ADMIN_KEY)).status).to.equal(200); // the admin key reads any
      const del = await getResponse(gw, c.id, key, 'DELETE');
      expect(del.status).to.equal(200);
      expect(del.body).to.deep.include({ id: c.id, deleted: true });
      expect((await getResponse(gw, c.id, key)).status).to.equal(404);
    });

    it('store: false in the body stores nothing', async () => {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ model: MODEL, store: false, messages: [{ role: 'user', content: 'x' }] }),
      });
      const c = (await res.json()) as { id: string };
      expect((await getResponse(gw, c.id, key)).status).to.equal(404);
    });
  });
}

describe('storage', () => {
  storageSuite('SQLite', async () => ({ driver: 'memory' }));
  storageSuite('PostgreSQL', async () =>
    POSTGRES_URL ? { driver: 'postgres', url: await freshPostgresUrl(), pool_size: 4 } : {},
  );

  it('marks a stream the client cut as incomplete; keeps usage without content for a private model; expires by TTL', async () => {
    const slow = {
      id: 'mock/slow',
      deployments: [{ provider: 'mock', model: 's', options: { chunk_size: 1, chunk_delay_ms: 30 } }],
    };
    const privateModel = { id: 'mock/private', deployments: [{ provider: 'mock', model: 'p' }] };
    const base = testConfig();
    const gw = await startTestGateway(
      testConfig({
        models: [...base.models, slow, privateModel],
        plugins: [
          { storage: { no_content_models: ['mock/private'], ttl_seconds: 1, sweep_interval_ms: 50 } },
          'routing',
        ],
      }),
    );
    try {
      const res = await fetch(`${gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'mock/slow',
          stream: true,
          messages: [{ role: 'user', content: 'a b c d e f g h' }],
        }),
      });
      const reader = res.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      const id = /"id":"(chatcmpl-[^"]+)"/.exec(first)![1];
      await reader.cancel();
      let r = await getResponse(gw, id);
      for (let i = 0; i < 20 && r.status === 404; i++) {
        await new Promise((ok) => setTimeout(ok, 20));
        r = await getResponse(gw, id);
      }
      expect(r.body.status).to.equal('incomplete');
      const p = (await (
        await fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'mock/private', messages: [{ role: 'user', content: 'secret' }] }),
        })
      ).json()) as { id: string };
      const stored = await getResponse(gw, p.id);
      expect(stored.body.output).to.deep.equal([]);
      expect(stored.body.content_stored).to.equal(false);
      expect((stored.body.usage as { output_tokens: number }).output_tokens).to.be.greaterThan(0);
      await new Promise((ok) => setTimeout(ok, 1200));
      expect((await getResponse(gw, p.id)).status).to.equal(404);
      const left = await gw.services.store.db.get<{ n: number }>('SELECT COUNT(*) AS n FROM responses');
      expect(Number(left!.n)).to.equal(0); // the sweep deleted them
    } finally {
      await gw.stop();
    }
  });
});
