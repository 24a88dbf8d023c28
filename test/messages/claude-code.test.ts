import { expect } from 'chai';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestGateway, testConfig, type TestGateway } from '../helpers/gateway';
import { ADMIN_KEY, adminCall, makeAccountKey } from '../helpers/accounts';
import { MockUpstream, openaiFixtures, sendJson, writeSse, type RecordedRequest } from '../helpers/mock-upstream';
import { settled } from '../plugins/credit/books';
import { fromNano } from '../../src/store/money';
import { refusingProxy, run } from '../helpers/cli-agents';

const prereqs = require('../../scripts/test-prereqs.js') as { ensureClaudeCode(): string; CLAUDE_CODE_VERSION: string };

type Json = Record<string, unknown>;
type Block = { type: string; [k: string]: unknown };
type AnthropicBody = { model: string; stream?: boolean; tools?: Array<{ name: string }>; messages: Json[] };

const MARKER = 'gateway-roundtrip-42';
const COMMAND = `echo ${MARKER}`;
const FINAL = `The command printed ${MARKER}.`;
const PROMPT = `Run \`${COMMAND}\` with the Bash tool and tell me what it printed.`;

/** The tool_result blocks of the conversation's last user turn. */
function toolResults(body: AnthropicBody): Block[] {
  const lastUser = [...body.messages].reverse().find((m) => m.role === 'user');
  const content = lastUser?.content;
  return Array.isArray(content) ? (content as Block[]).filter((b) => b.type === 'tool_result') : [];
}

const ev = (type: string, data: Json) => ({ event: type, data: { type, ...data } });

/**
 * The scripted Claude (Anthropic's wire, as its docs show it): asked with the Bash tool offered, it calls Bash with
 * `echo`; once the tool's result is back, it answers with text. A request without tools (Claude Code's side requests)
 * gets a short text.
 */
function scriptedClaude(req: RecordedRequest, res: ServerResponse): Promise<void> | void {
  const body = req.json as AnthropicBody;
  const results = toolResults(body);
  const wantsTool = results.length === 0 && (body.tools ?? []).some((t) => t.name === 'Bash');
  const usage = { input_tokens: 900, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const content: Block[] = wantsTool
    ? [{ type: 'tool_use', id: 'toolu_01Echo', name: 'Bash', input: { command: COMMAND, description: 'Print' } }]
    : [{ type: 'text', text: results.length > 0 ? FINAL : 'ok' }];
  const stop = wantsTool ? 'tool_use' : 'end_turn';
  const message = { id: 'msg_01Scripted', type: 'message', role: 'assistant', model: body.model };
  if (!body.stream)
    return sendJson(res, 200, {
      ...message,
      content,
      stop_reason: stop,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 20 },
    });
  const blocks = content.flatMap((b, index) =>
    b.type === 'tool_use'
      ? [
          ev('content_block_start', { index, content_block: { ...b, input: {} } }),
          ev('content_block_delta', {
            index,
            delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) },
          }),
          ev('content_block_stop', { index }),
        ]
      : [
          ev('content_block_start', { index, content_block: { type: 'text', text: '' } }),
          ev('content_block_delta', { index, delta: { type: 'text_delta', text: String(b.text) } }),
          ev('content_block_stop', { index }),
        ],
  );
  return writeSse(
    res,
    [
      ev('message_start', {
        message: {
          ...message,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { ...usage, output_tokens: 1 },
        },
      }),
      ev('ping', {}),
      ...blocks,
      ev('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 20 } }),
      ev('message_stop', {}),
    ],
    { named: true },
  );
}

/** The same script on an OpenAI-compatible upstream (the gateway translates). */
function scriptedCompat(req: RecordedRequest, res: ServerResponse): Promise<void> | void {
  const body = req.json as { stream?: boolean; tools?: Array<{ function: { name: string } }>; messages: Json[] };
  const back = body.messages.some((m) => m.role === 'tool');
  const wantsTool = !back && (body.tools ?? []).some((t) => t.function.name === 'Bash');
  const text = back ? FINAL : 'ok';
  const args = JSON.stringify({ command: COMMAND, description: 'Print' });
  if (!body.stream) return sendJson(res, 200, openaiFixtures.completion(text));
  return writeSse(
    res,
    wantsTool
      ? [
          openaiFixtures.chunk({ role: 'assistant', content: '' }),
          openaiFixtures.chunk({
            tool_calls: [{ index: 0, id: 'call_echo', type: 'function', function: { name: 'Bash', arguments: args } }],
          }),
          openaiFixtures.chunk({}, 'tool_calls'),
          openaiFixtures.usageChunk(900, 20),
        ]
      : [
          openaiFixtures.chunk({ role: 'assistant', content: '' }),
          openaiFixtures.chunk({ content: text }),
          openaiFixtures.chunk({}, 'stop'),
          openaiFixtures.usageChunk(900, 20),
        ],
  );
}

/**
 * Claude Code itself through the gateway (issue 45): its npm package's native binary in print mode (`claude -p`), a
 * temp HOME, ANTHROPIC_BASE_URL at the gateway, a gateway key, telemetry, auto-update, error reporting and
 * non-essential traffic off, every other host refused by a loopback proxy. The gateway's model is on a scripted
 * upstream that first asks for Bash (`echo`) and, once the tool's result is back, answers with text: on an Anthropic
 * mock (passthrough) and on an OpenAI-compatible mock (translation).
 */
describe('Claude Code through the gateway (issue 45)', function () {
  this.timeout(300_000);
  let claude: string;
  const anthropic = new MockUpstream();
  const compat = new MockUpstream();
  let gw: TestGateway;
  let proxy: Awaited<ReturnType<typeof refusingProxy>>;
  let dir: string;

  before(async function () {
    try {
      claude = prereqs.ensureClaudeCode();
    } catch (e) {
      console.log(`      Claude Code could not be installed here (${(e as Error).message}): skipped`);
      this.skip();
    }
    await anthropic.start();
    anthropic.handler = scriptedClaude;
    await compat.start();
    compat.handler = scriptedCompat;
    proxy = await refusingProxy();
    const pricing = { prompt: 0.000003, completion: 0.000015, cache_read: 0.0000003, cache_write: 0.00000375 };
    gw = await startTestGateway(
      testConfig(
        {
          providers: [
            { name: 'claude', type: 'anthropic', api_base: anthropic.url, api_key: 'sk-ant-upstream' },
            { name: 'compat', type: 'openai', api_base: `${compat.url}/v1`, api_key: 'sk-compat' },
          ],
          models: [
            {
              id: 'claude-sonnet-4-5',
              context_length: 200000,
              pricing,
              deployments: [{ provider: 'claude', model: 'claude-sonnet-4-5-20250929' }],
            },
            {
              id: 'claude-haiku-4-5',
              context_length: 200000,
              pricing,
              deployments: [{ provider: 'compat', model: 'gpt-4o-mini' }],
            },
          ],
          plugins: ['auth', 'params', 'fallback', 'limits', 'credit', 'storage', 'routing'],
        },
        { GATEWAY_ADMIN_KEY: ADMIN_KEY },
      ),
    );
    dir = mkdtempSync(join(tmpdir(), 'gateway-claude-code-'));
  });
  after(async () => {
    await gw?.stop();
    await anthropic.stop();
    await compat.stop();
    proxy?.server.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function claudeP(model: string, auth: Record<string, string>, name: string) {
    const home = join(dir, `${name}-home`);
    const work = join(dir, `${name}-work`);
    mkdirSync(home);
    mkdirSync(work);
    const env = {
      PATH: process.env.PATH,
      HOME: home,
      ANTHROPIC_BASE_URL: gw.url,
      ...auth,
      ANTHROPIC_MODEL: model,
      ANTHROPIC_SMALL_FAST_MODEL: model,
      ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
      DISABLE_TELEMETRY: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_ERROR_REPORTING: '1',
      DISABLE_BUG_COMMAND: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      HTTPS_PROXY: proxy.url,
      HTTP_PROXY: proxy.url,
      NO_PROXY: '127.0.0.1,localhost',
    };
    const started = Date.now();
    const r = await run(
      claude,
      ['-p', PROMPT, '--model', model, '--allowedTools', 'Bash(echo:*)', '--output-format', 'json'],
      env,
      work,
      240_000,
    );
    const seconds = (Date.now() - started) / 1000;
    console.log(`      claude ${prereqs.CLAUDE_CODE_VERSION} (${name}): exit ${r.code} in ${seconds.toFixed(1)} s`);
    console.log(`      stdout: ${r.stdout.slice(0, 600)}`);
    if (r.stderr) console.log(`      stderr: ${r.stderr.slice(0, 600)}`);
    expect(r.code, r.stderr || r.stdout).to.equal(0);
    return JSON.parse(r.stdout) as Json;
  }

  it('passthrough: `claude -p` runs Bash (echo) and answers, on an Anthropic upstream (x-api-key)', async () => {
    const { key, accountId } = await makeAccountKey(gw, { credits: 5 });
    const before = anthropic.requests.length;
    const out = await claudeP('claude-sonnet-4-5', { ANTHROPIC_API_KEY: key }, 'passthrough');
    expect(out.result).to.equal(FINAL);
    expect(out.is_error).to.equal(false);
    const seen = anthropic.requests.slice(before);
    console.log(
      `      printed: ${JSON.stringify(out.result)} (${String(out.num_turns)} turns, ${seen.length} requests)`,
    );
    // What Claude Code sent reached Anthropic in its own form: its version and betas, adaptive or budgeted thinking,
    // context_management, deferred tools; the upstream's key, never the gateway's.
    expect(seen).to.have.length(2);
    const first = seen[0];
    expect(first.path).to.equal('/v1/messages');
    expect(first.headers['anthropic-version']).to.equal('2023-06-01');
    expect(String(first.headers['anthropic-beta'])).to.include('claude-code-20250219');
    expect(first.headers['x-api-key']).to.equal('sk-ant-upstream');
    const sent = first.json as Json & { tools: Json[] };
    expect(sent.model).to.equal('claude-sonnet-4-5-20250929');
    expect(sent).to.include.keys('thinking', 'context_management', 'system', 'metadata');
    expect(sent.tools.some((t) => t.defer_loading === true)).to.equal(true);
    // The tool round trip as the upstream saw it: Bash offered, called, its output sent back as a tool_result.
    const withResult = seen.map((q) => q.json as AnthropicBody).find((b) => toolResults(b).length > 0);
    expect(withResult, 'a request carrying the tool result').to.not.equal(undefined);
    const result = toolResults(withResult!)[0];
    expect(result.tool_use_id).to.equal('toolu_01Echo');
    expect(JSON.stringify(result.content)).to.include(MARKER);
    // Records and credit: every request of the run on the key's account, charged.
    await settled(gw, accountId);
    const records = await gw.services.store.generations.list({ accountId, limit: 50 });
    expect(records.length).to.equal(seen.length);
    const charged = records.reduce((s, g) => s + g.cost, 0);
    expect(charged).to.be.greaterThan(0);
    const account = (await adminCall(gw, 'GET', `/v1/accounts/${accountId}`)).body.data as { usage: number };
    expect(account.usage).to.equal(fromNano(charged));
    // With non-essential traffic off it reached nothing but the gateway: the proxy saw no request.
    expect(proxy.refused).to.deep.equal([]);
  });

  it('translation: the same on an OpenAI-compatible upstream, the key as Bearer (ANTHROPIC_AUTH_TOKEN)', async () => {
    const { key, accountId } = await makeAccountKey(gw, { credits: 5 });
    const before = compat.requests.length;
    const out = await claudeP('claude-haiku-4-5', { ANTHROPIC_AUTH_TOKEN: key }, 'translation');
    expect(out.result).to.equal(FINAL);
    const seen = compat.requests.slice(before).map((q) => q.json as { messages: Json[] });
    const back = seen.find((b) => b.messages.some((m) => m.role === 'tool'));
    const tool = back?.messages.find((m) => m.role === 'tool');
    expect(tool?.tool_call_id).to.equal('call_echo');
    expect(JSON.stringify(tool?.content)).to.include(MARKER);
    await settled(gw, accountId);
    const records = await gw.services.store.generations.list({ accountId, limit: 50 });
    expect(records.length).to.equal(seen.length);
    expect(records.reduce((s, g) => s + g.cost, 0)).to.be.greaterThan(0);
  });
});
