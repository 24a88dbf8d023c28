import { expect } from 'chai';
import { MockUpstream, openaiFixtures, sendJson, type RecordedRequest } from '../../helpers/mock-upstream';
import { postJson, startTestGateway, testConfig, MOCK_MODEL, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../../helpers/accounts';
import { within } from '../../helpers/poll';
import { HttpMcpUpstream } from './upstream-http';

const NANO = 1e9;
type Msg = { role: string; content?: string | null; tool_call_id?: string };

/** A completion that calls `name` with `args` (the Chat Completions API's shape). */
function toolCall(name: string, args: unknown) {
  const c = openaiFixtures.completion('');
  c.choices[0].message = {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name, arguments: JSON.stringify(args) } }],
  } as never;
  c.choices[0].finish_reason = 'tool_calls';
  return c;
}

/**
 * Issue 50, remote MCP tools on any model: a Responses request declares an mcp tool; the scripted model asks for it,
 * the gateway calls the MCP server, asks the model again with the result, and answers with the call shown. Each
 * model round is a request of its own through the chain: reserved, charged and recorded.
 */
describe('mcp: remote MCP tools on a Responses request', function () {
  this.timeout(60000);
  let gw: TestGateway;
  let web: HttpMcpUpstream;
  let model: MockUpstream;

  before(async () => {
    web = await new HttpMcpUpstream('remote-tools-secret-5a5a').start();
    model = await new MockUpstream().start();
    // The scripted model: without a tool result it calls web__add; with one it answers with it.
    model.handler = (req: RecordedRequest, res) => {
      const messages = (req.json as { messages: Msg[] }).messages;
      const result = messages.find((m) => m.role === 'tool');
      if (!result) return sendJson(res, 200, toolCall('web__add', { a: 2, b: 3 }));
      sendJson(res, 200, openaiFixtures.completion(`The sum is ${result.content ?? '?'}`));
    };
    const mcp = {
      servers: [{ name: 'web', url: web.url, headers: { Authorization: `Bearer ${web.secret}` }, price_per_call: 0.1 }],
      max_tool_rounds: 4,
    };
    gw = await startTestGateway(
      testConfig(
        {
          providers: [{ name: 'up', type: 'openai', api_base: `${model.url}/v1`, api_key: 'sk-up' }],
          models: [{ ...MOCK_MODEL, id: 'up/m', deployments: [{ provider: 'up', model: 'm' }] }],
          plugins: ['auth', 'params', 'credit', 'storage', { mcp }, 'routing'],
        },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
    const ready = async () => ((await (await fetch(`${gw.url}/ready`)).json()) as { status: string }).status;
    expect(await within(10000, async () => (await ready()) === 'ready', 100)).to.equal(true);
  });
  after(async () => {
    await gw?.stop();
    await web?.stop();
    await model?.stop();
  });

  const ask = (key: string, tools: unknown[]) =>
    postJson(
      `${gw.url}/v1/responses`,
      { model: 'up/m', input: 'What is 2 + 3?', tools },
      { authorization: `Bearer ${key}` },
    );
  const MCP_TOOL = { type: 'mcp', server_label: 'web', allowed_tools: ['add'], require_approval: 'never' };

  it('lists the tools to the model, runs its call, and answers with mcp_list_tools and mcp_call shown', async () => {
    const k = await makeAccountKey(gw, { credits: 5 });
    const before = model.requests.length;
    const res = await ask(k.key, [MCP_TOOL]);
    const r = (await res.json()) as {
      id: string;
      output: Array<Record<string, unknown>>;
      usage: Record<string, number>;
    };
    expect(res.status, JSON.stringify(r)).to.equal(200);
    expect(r.output.map((o) => o.type)).to.deep.equal(['mcp_list_tools', 'mcp_call', 'message']);
    expect((r.output[0].tools as Array<{ name: string }>).map((t) => t.name)).to.deep.equal(['add']);
    expect(r.output[1]).to.deep.include({ server_label: 'web', name: 'add', arguments: '{"a":2,"b":3}', output: '5' });
    expect(r.output[1].error).to.equal(null);
    expect(JSON.stringify(r.output[2])).to.include('The sum is 5');
    // Two model rounds: the first offered web__add as a function tool; the second carried the call and its result.
    const rounds = model.requests
      .slice(before)
      .map((q) => q.json as { tools: Array<{ function: { name: string } }>; messages: Msg[] });
    expect(rounds).to.have.length(2);
    expect(rounds[0].tools.map((t) => t.function.name)).to.deep.equal(['web__add']);
    expect(rounds[1].messages.find((m) => m.role === 'tool')).to.deep.include({ tool_call_id: 'call_1', content: '5' });
    expect(r.usage.input_tokens).to.equal(2 * 19, 'usage sums both rounds');
    // Both rounds recorded and charged as requests of their own, the tool call at its price.
    const gens = await gw.services.store.db.all<{ id: string; cost: unknown }>(
      'SELECT id, cost FROM generations WHERE id = ? OR id = ? ORDER BY id',
      [r.id, `${r.id}_r1`],
    );
    expect(gens.map((g) => g.id)).to.deep.equal([r.id, `${r.id}_r1`]);
    for (const g of gens) expect(Number(g.cost)).to.be.greaterThan(0);
    const calls = (await adminCall(gw, 'GET', `/v1/mcp/calls?key=${k.hash}`)).body.data as Array<
      Record<string, unknown>
    >;
    expect(calls.map((c) => [c.tool, c.outcome, Number(c.cost)])).to.deep.equal([['add', 'ok', 0.1 * NANO]]);
    const charged = gens.reduce((n, g) => n + Number(g.cost), 0) + 0.1 * NANO;
    expect(await gw.services.store.ledger.sum(k.accountId)).to.equal(charged);
  });

  it('does the same on chat: the answer, with the rounds in mcp_output and the usage summed', async () => {
    const k = await makeAccountKey(gw, { credits: 5 });
    const before = model.requests.length;
    const res = await postJson(
      `${gw.url}/v1/chat/completions`,
      { model: 'up/m', messages: [{ role: 'user', content: 'What is 2 + 3?' }], tools: [MCP_TOOL] },
      { authorization: `Bearer ${k.key}` },
    );
    const r = (await res.json()) as {
      choices: Array<{ message: { content: string } }>;
      mcp_output: Array<Record<string, unknown>>;
      usage: { prompt_tokens: number };
    };
    expect(res.status, JSON.stringify(r)).to.equal(200);
    expect(r.choices[0].message.content).to.equal('The sum is 5');
    expect(r.mcp_output.map((o) => o.type)).to.deep.equal(['mcp_list_tools', 'mcp_call']);
    expect(r.mcp_output[1]).to.deep.include({ server_label: 'web', name: 'add', output: '5', error: null });
    expect(r.usage.prompt_tokens).to.equal(2 * 19);
    expect(model.requests.length - before).to.equal(2);
    const calls = (await adminCall(gw, 'GET', `/v1/mcp/calls?key=${k.hash}`)).body.data as unknown[];
    expect(calls).to.have.length(1);
    const streamed = await postJson(
      `${gw.url}/v1/chat/completions`,
      { model: 'up/m', stream: true, messages: [{ role: 'user', content: 'hi' }], tools: [MCP_TOOL] },
      { authorization: `Bearer ${k.key}` },
    );
    expect(streamed.status).to.equal(400);
  });

  it('lists only what the key may use, and refuses a server_url or an approval flow', async () => {
    const k = await makeAccountKey(gw, { credits: 5 });
    expect((await adminCall(gw, 'PUT', `/v1/mcp/access/keys/${k.hash}`, { tools: ['web__slow'] })).status).to.equal(
      200,
    );
    const before = model.requests.length;
    const res = await ask(k.key, [MCP_TOOL]);
    const r = (await res.json()) as { output: Array<Record<string, unknown>> };
    expect(r.output[0]).to.deep.include({ type: 'mcp_list_tools', tools: [] });
    expect((model.requests[before].json as { tools?: unknown }).tools).to.equal(undefined);
    const url = await ask(k.key, [{ ...MCP_TOOL, server_url: 'https://evil.example/mcp' }]);
    expect(url.status).to.equal(400);
    const approval = await ask(k.key, [{ ...MCP_TOOL, require_approval: 'always' }]);
    expect(approval.status).to.equal(400);
    const unknown = await ask(k.key, [{ ...MCP_TOOL, server_label: 'nope' }]);
    expect(unknown.status).to.equal(400);
  });
});
