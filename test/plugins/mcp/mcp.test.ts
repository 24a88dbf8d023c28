import { expect } from 'chai';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { parseConfig } from '../../../src/config/load';
import { MOCK_MODEL, startTestGateway, type TestGateway } from '../../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../../helpers/accounts';
import { within } from '../../helpers/poll';
import { HttpMcpUpstream } from './upstream-http';
import { mcpClient, STDIO_SERVER, textOf } from './helpers';

const SECRET = 'web-upstream-secret-4f1c2a9e77';
const FILES_SECRET = 'files-env-secret-8d02b1c4';
const testConfigObject = () => ({
  server: { host: '127.0.0.1', port: 0, log_level: 'info', shutdown_grace_ms: 2000 },
  store: { driver: 'memory' },
  providers: [{ name: 'mock', type: 'mock' }],
  models: [MOCK_MODEL],
});

/**
 * Issue 50: the official MCP SDK's client against /mcp, aggregating a Streamable HTTP server built with the SDK here
 * and a stdio server the gateway starts and supervises.
 */
describe('mcp: the gateway as an MCP server (issue 50)', function () {
  this.timeout(60000);
  let gw: TestGateway;
  let web: HttpMcpUpstream;
  let key: { key: string; accountId: string; hash: string };
  const clients: Client[] = [];
  const connect = async (k: string) => {
    const c = await mcpClient(gw.url, k);
    clients.push(c);
    return c;
  };
  const ready = async () => (await (await fetch(`${gw.url}/ready`)).json()) as { status: string; checks?: unknown };

  before(async () => {
    web = await new HttpMcpUpstream(SECRET).start();
    const mcp = {
      servers: [
        { name: 'web', url: web.url, headers: { Authorization: 'Bearer ${WEB_MCP_TOKEN}' } },
        { name: 'files', ...STDIO_SERVER, env: { FIXTURE_SECRET: FILES_SECRET } },
      ],
      backoff: { initial_ms: 100, max_ms: 400 },
      health_interval_ms: 300,
      connect_timeout_ms: 5000,
      timeout_ms: 15000,
      record_payloads: true,
    };
    // Through the YAML parser, as gateway.yaml is read: the header's ${WEB_MCP_TOKEN} comes from the environment.
    // guardrails in the chain: the call log's payloads pass through its detectors.
    const yaml = JSON.stringify({ ...testConfigObject(), plugins: ['auth', 'guardrails', { mcp }, 'routing'] });
    gw = await startTestGateway(
      parseConfig(yaml, { env: { GATEWAY_ADMIN_KEY: ADMIN_KEY, WEB_MCP_TOKEN: SECRET }, baseDir: process.cwd() }),
    );
    key = await makeAccountKey(gw);
    const up = await within(20000, async () => (await ready()).status === 'ready', 100);
    expect(up, JSON.stringify(await ready())).to.equal(true);
  });
  after(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await gw?.stop();
    await web?.stop();
  });

  it('initializes, lists the tools of both servers namespaced, and calls a tool on each', async () => {
    const c = await connect(key.key);
    expect(c.getServerVersion()?.name).to.equal('model-gateway');
    const { tools, _meta } = await c.listTools();
    const names = tools.map((t) => t.name);
    expect(names).to.include.members(['web__add', 'web__slow', 'files__echo', 'files__slow']);
    expect(tools.find((t) => t.name === 'web__add')?.inputSchema.properties).to.have.keys('a', 'b');
    const servers = (_meta?.['gateway/servers'] as Array<{ name: string; status: string }>).map((s) => s.status);
    expect(servers).to.deep.equal(['up', 'up']);
    expect(textOf(await c.callTool({ name: 'web__add', arguments: { a: 2, b: 3 } }))).to.equal('5');
    expect(textOf(await c.callTool({ name: 'files__echo', arguments: { text: 'hi there' } }))).to.equal('hi there');
    const prompt = await c.getPrompt({ name: 'files__greet', arguments: { who: 'Ada' } });
    expect(JSON.stringify(prompt.messages)).to.include('Hello Ada');
    const { resources } = await c.listResources();
    expect(resources.map((r) => r.uri)).to.include('web+docs://readme');
    const read = await c.readResource({ uri: 'web+docs://readme' });
    expect(JSON.stringify(read.contents)).to.include('read me');
    const calls = await adminCall(gw, 'GET', `/v1/mcp/calls?key=${key.hash}`);
    const rows = calls.body.data as Array<Record<string, unknown>>;
    expect(rows.map((r) => `${r.server}/${r.tool}/${r.outcome}`)).to.include.members(['web/add/ok', 'files/echo/ok']);
    expect(rows.find((r) => r.tool === 'add')?.arguments).to.equal('{"a":2,"b":3}');
    // The client gets the tool's answer as it is; the log keeps it with the guardrails' placeholders.
    const mail = await c.callTool({ name: 'files__echo', arguments: { text: 'write to ada@example.com' } });
    expect(textOf(mail)).to.equal('write to ada@example.com');
    const logged = (await adminCall(gw, 'GET', `/v1/mcp/calls?key=${key.hash}&limit=1`)).body.data as Array<
      Record<string, unknown>
    >;
    expect(logged[0].arguments).to.equal('{"text":"write to [EMAIL]"}');
    expect(String(logged[0].result)).to.include('write to [EMAIL]').and.not.include('ada@example.com');
  });

  it('passes progress notifications through, and a cancellation reaches the upstream server', async () => {
    const c = await connect(key.key);
    const seen: Array<{ progress: number; total?: number; message?: string }> = [];
    const abort = new AbortController();
    const call = c.callTool({ name: 'web__slow', arguments: {} }, undefined, {
      signal: abort.signal,
      onprogress: (p) => {
        seen.push(p);
        if (seen.length === 2) abort.abort('enough');
      },
    });
    let failed: unknown;
    await call.catch((e: unknown) => (failed = e));
    expect(failed, 'the call was cancelled').to.not.equal(undefined);
    expect(seen.map((p) => [p.progress, p.total, p.message])).to.deep.equal([
      [1, 10, 'step 1'],
      [2, 10, 'step 2'],
    ]);
    expect(await within(5000, () => web.cancelled === 1)).to.equal(true, 'the upstream saw the cancellation');
    // The stdio server too.
    const stdioSeen: number[] = [];
    const abort2 = new AbortController();
    const call2 = c.callTool({ name: 'files__slow', arguments: {} }, undefined, {
      signal: abort2.signal,
      onprogress: (p) => {
        stdioSeen.push(p.progress);
        abort2.abort();
      },
    });
    await call2.catch(() => undefined);
    expect(stdioSeen).to.deep.equal([1]);
    const cancelled = await within(5000, async () => {
      const r = await adminCall(gw, 'GET', `/v1/mcp/calls?key=${key.hash}`);
      const rows = r.body.data as Array<Record<string, unknown>>;
      return rows.filter((x) => x.tool === 'slow' && x.outcome === 'cancelled').length === 2;
    });
    expect(cancelled).to.equal(true);
  });

  it('refuses per tool a key whose allowlist leaves the tool out; the change is audited', async () => {
    const narrow = await makeAccountKey(gw);
    const set = await adminCall(gw, 'PUT', `/v1/mcp/access/keys/${narrow.hash}`, { tools: ['web__add', 'files__e*'] });
    expect(set.status, JSON.stringify(set.body)).to.equal(200);
    const c = await connect(narrow.key);
    const names = (await c.listTools()).tools.map((t) => t.name).sort();
    expect(names).to.deep.equal(['files__echo', 'files__env_secret', 'web__add']);
    expect(textOf(await c.callTool({ name: 'web__add', arguments: { a: 1, b: 1 } }))).to.equal('2');
    const refused = await c.callTool({ name: 'web__slow', arguments: {} }).catch((e: unknown) => e);
    expect(refused).to.be.instanceOf(McpError);
    expect((refused as McpError).message).to.match(/may not call the tool 'web__slow'/);
    expect((refused as McpError).data).to.deep.include({ code: 'tool_not_allowed', status: 403 });
    const log = await gw.services.store.audit.list({ action: 'mcp.access.set', limit: 5 });
    expect(log[0]).to.deep.include({ target: `key:${narrow.hash}` });
    expect(log[0].after).to.deep.equal({ tools: ['web__add', 'files__e*'] });
    const rows = (await adminCall(gw, 'GET', `/v1/mcp/calls?key=${narrow.hash}`)).body.data as Array<
      Record<string, unknown>
    >;
    expect(rows.map((r) => `${r.tool}/${r.outcome}/${r.error_code}`)).to.include('slow/refused/tool_not_allowed');
    // An account's list narrows its keys too; a viewer may not set it.
    const acc = await adminCall(gw, 'PUT', `/v1/mcp/access/accounts/${narrow.accountId}`, { tools: ['files__*'] });
    expect(acc.status).to.equal(200);
    const c2 = await connect(narrow.key);
    expect((await c2.listTools()).tools.map((t) => t.name).sort()).to.deep.equal(['files__echo', 'files__env_secret']);
  });

  it('refuses a disabled key at initialize (401)', async () => {
    const k = await makeAccountKey(gw);
    expect((await adminCall(gw, 'PATCH', `/v1/keys/${k.hash}`, { disabled: true })).status).to.equal(200);
    const err = await mcpClient(gw.url, k.key).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(Error);
    expect(String((err as Error).message)).to.match(/401|disabled/);
    const raw = await fetch(`${gw.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${k.key}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
    });
    expect(raw.status).to.equal(401);
    expect(((await raw.json()) as { error: { code: string } }).error.code).to.equal('api_key_disabled');
  });

  it('an upstream server killed mid-session gives a clear error, shows as down, and recovers when it returns', async () => {
    const c = await connect(key.key);
    expect(textOf(await c.callTool({ name: 'web__add', arguments: { a: 1, b: 2 } }))).to.equal('3');
    await web.stop();
    const started = Date.now();
    const err = await c.callTool({ name: 'web__add', arguments: { a: 1, b: 2 } }).catch((e: unknown) => e);
    expect(Date.now() - started).to.be.below(5000);
    expect(err).to.be.instanceOf(McpError);
    expect((err as McpError).message).to.match(/MCP server 'web'/);
    expect((err as McpError).data).to.deep.include({ code: 'mcp_server_unavailable' });
    expect((err as McpError).message).to.not.include(SECRET);
    const down = await within(5000, async () => JSON.stringify(await ready()).includes('web: down'));
    expect(down, JSON.stringify(await ready())).to.equal(true);
    const listing = await c.listTools();
    expect(listing.tools.map((t) => t.name).filter((n) => n.startsWith('web__'))).to.deep.equal([]);
    const health = listing._meta?.['gateway/servers'] as Array<{ name: string; status: string; error: string }>;
    expect(health.find((s) => s.name === 'web')?.status).to.equal('down');
    // Still down: a call fails at once, never a hang.
    const again = await c.callTool({ name: 'web__add', arguments: { a: 1, b: 2 } }).catch((e: unknown) => e);
    expect((again as McpError).message).to.match(/'web' is unavailable/);
    await web.start();
    const back = await within(
      10000,
      async () => {
        const r = await c.callTool({ name: 'web__add', arguments: { a: 4, b: 4 } }).catch(() => null);
        return r !== null && textOf(r) === '8';
      },
      100,
    );
    expect(back).to.equal(true);
    expect(JSON.stringify(await ready())).to.not.include('web: down');
  });

  it('restarts a stdio server that exits, and relays its list-changed notification', async () => {
    const c = await connect(key.key);
    await c.callTool({ name: 'files__crash', arguments: {} });
    const restarted = await within(
      15000,
      async () => {
        const h = (await adminCall(gw, 'GET', '/v1/mcp/servers')).body.data as Array<{
          name: string;
          restarts: number;
          status: string;
        }>;
        const f = h.find((s) => s.name === 'files');
        return f !== undefined && f.restarts >= 1 && f.status === 'up';
      },
      100,
    );
    expect(restarted).to.equal(true);
    expect(textOf(await c.callTool({ name: 'files__echo', arguments: { text: 'back' } }))).to.equal('back');
    let changed = 0;
    c.setNotificationHandler(ToolListChangedNotificationSchema, () => void changed++);
    await c.callTool({ name: 'files__add_tool', arguments: {} });
    expect(await within(5000, () => changed > 0)).to.equal(true, 'tools/list_changed reached the client');
    expect((await c.listTools()).tools.map((t) => t.name)).to.include('files__extra');
  });

  it('never hands the upstream secrets to clients', async () => {
    const c = await connect(key.key);
    const e1 = (await c.callTool({ name: 'web__leak', arguments: {} }).catch((e: unknown) => e)) as unknown;
    const e2 = (await c.callTool({ name: 'files__env_secret', arguments: {} }).catch((e: unknown) => e)) as unknown;
    const text = JSON.stringify([e1 instanceof Error ? e1.message : e1, e2 instanceof Error ? e2.message : e2]);
    expect(text).to.not.include(SECRET);
    expect(text).to.not.include(FILES_SECRET);
    expect(text).to.include('[redacted]');
    const servers = JSON.stringify((await adminCall(gw, 'GET', '/v1/mcp/servers')).body);
    expect(servers).to.not.include(SECRET);
    expect(servers).to.not.include(web.url);
    expect(gw.logs.join('\n')).to.not.include(SECRET);
    expect(gw.logs.join('\n')).to.not.include(FILES_SECRET);
    expect(
      gw.logs.some((l) => l.includes('MCP server stderr') && l.includes('files server starting with [redacted]')),
    ).to.equal(true, "the stdio server's stderr is logged, its secret cut");
  });
});
