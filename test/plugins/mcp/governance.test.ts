import { expect } from 'chai';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startTestGateway, testConfig, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../../helpers/accounts';
import { within } from '../../helpers/poll';
import { attr, otlpReceiver, type OtlpReceiver } from '../tracing/otlp';
import { HttpMcpUpstream } from './upstream-http';
import { mcpClient, textOf } from './helpers';

const NANO = 1e9;

/** Issue 50: the price of a tool call charged through credit, the per-key rate limit, metrics and traces. */
describe('mcp: price, rate limit, metrics and traces', function () {
  this.timeout(60000);
  let gw: TestGateway;
  let web: HttpMcpUpstream;
  let otlp: OtlpReceiver;
  const clients: Client[] = [];
  const connect = async (k: string) => {
    const c = await mcpClient(gw.url, k);
    clients.push(c);
    return c;
  };
  const refusal = async (p: Promise<unknown>) => {
    const e = await p.then(
      () => null,
      (err: unknown) => err,
    );
    expect(e, 'refused').to.be.instanceOf(McpError);
    return (e as McpError).data as { code: string; status: number; retry_after?: number };
  };

  before(async () => {
    web = await new HttpMcpUpstream('governance-secret-77aa01').start();
    otlp = await otlpReceiver();
    const mcp = {
      servers: [
        {
          name: 'web',
          url: web.url,
          headers: { Authorization: `Bearer ${web.secret}` },
          price_per_call: 0.25,
          tool_prices: { 'sl*': 0 },
        },
      ],
      calls_per_minute: 3,
    };
    gw = await startTestGateway(
      testConfig(
        { plugins: ['metrics', { tracing: { endpoint: otlp.url } }, 'auth', { mcp }, 'credit', 'routing'] },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
    const ready = async () => ((await (await fetch(`${gw.url}/ready`)).json()) as { status: string }).status;
    expect(await within(10000, async () => (await ready()) === 'ready', 100)).to.equal(true);
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await gw?.stop();
    await web?.stop();
    await new Promise((r) => otlp?.server.close(r));
  });

  it('charges the price of each call through the credit ledger, and refuses with 402 when the credit is short', async () => {
    const k = await makeAccountKey(gw, { credits: 0.6 });
    const c = await connect(k.key);
    expect(textOf(await c.callTool({ name: 'web__add', arguments: { a: 1, b: 2 } }))).to.equal('3');
    expect(textOf(await c.callTool({ name: 'web__add', arguments: { a: 2, b: 2 } }))).to.equal('4');
    const short = await refusal(c.callTool({ name: 'web__add', arguments: { a: 3, b: 3 } }));
    expect(short).to.deep.include({ code: 'insufficient_account_credits', status: 402 });
    expect(web.calls).to.equal(2, 'the refused call never reached the server');
    expect(await gw.services.store.ledger.sum(k.accountId)).to.equal(0.5 * NANO);
    const account = await adminCall(gw, 'GET', `/v1/accounts/${k.accountId}`);
    expect((account.body.data as { usage: number }).usage).to.equal(0.5);
    const rows = (await adminCall(gw, 'GET', `/v1/mcp/calls?key=${k.hash}`)).body.data as Array<
      Record<string, unknown>
    >;
    expect(rows.map((r) => [r.outcome, Number(r.cost)])).to.deep.equal([
      ['refused', 0],
      ['ok', 0.25 * NANO],
      ['ok', 0.25 * NANO],
    ]);
    expect(rows[0].arguments, 'payloads are not kept by default').to.equal(null);
  });

  it('limits tool calls per key a minute (429 with a retry time); another key has its own count', async () => {
    const k = await makeAccountKey(gw, { credits: 10 });
    const c = await connect(k.key);
    for (let i = 0; i < 3; i++) await c.callTool({ name: 'web__add', arguments: { a: i, b: 0 } });
    const limited = await refusal(c.callTool({ name: 'web__add', arguments: { a: 9, b: 0 } }));
    expect(limited).to.deep.include({ code: 'rate_limit_exceeded', status: 429 });
    expect(limited.retry_after).to.be.within(1, 60);
    const other = await makeAccountKey(gw, { credits: 10 });
    const c2 = await connect(other.key);
    expect(textOf(await c2.callTool({ name: 'web__add', arguments: { a: 5, b: 5 } }))).to.equal('10');
  });

  it('counts calls in Prometheus metrics and traces each call, with no secret in either', async () => {
    const metrics = await (await fetch(`${gw.url}/metrics`)).text();
    expect(metrics).to.match(/gateway_mcp_tool_calls_total\{server="web",tool="add",outcome="ok"\} \d+/);
    expect(metrics).to.match(/gateway_mcp_tool_calls_total\{server="web",tool="add",outcome="refused"\} 2/);
    expect(metrics).to.match(/gateway_mcp_tool_call_duration_seconds_count\{server="web",tool="add"\} \d+/);
    expect(metrics).to.include('gateway_mcp_server_up{server="web"} 1');
    expect(metrics).to.not.include(web.secret);
    const traced = await within(10000, () => otlp.spans.some((s) => s.name === 'tools/call web__add'), 100);
    expect(traced).to.equal(true);
    const span = otlp.spans.find((s) => s.name === 'tools/call web__add')!;
    expect(attr(span, 'gateway.mcp.server')).to.equal('web');
    expect(attr(span, 'gen_ai.tool.name')).to.equal('add');
    expect(JSON.stringify(otlp.spans)).to.not.include(web.secret);
  });
});
