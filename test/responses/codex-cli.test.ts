import { expect } from 'chai';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { MockUpstream, openaiFixtures, writeSse, type RecordedRequest } from '../helpers/mock-upstream';
import { adminCall } from '../helpers/accounts';
import { keyedClient } from '../helpers/sdk';
import { operationsConfig } from './helpers';
import { fromNano } from '../../src/store/money';
import { refusingProxy, run } from '../helpers/cli-agents';

const prereqs = require('../../scripts/test-prereqs.js') as { ensureCodex(): string; CODEX_VERSION: string };

type Json = Record<string, unknown>;

/** The patch the scripted model asks Codex to apply through its custom `apply_patch` tool. */
const PATCH = '*** Begin Patch\n*** Add File: hello.txt\n+hello from the gateway\n*** End Patch\n';
const FINAL = 'Created hello.txt through the gateway.';

/**
 * Codex needs the model's metadata to offer its full tool set (the `apply_patch` custom tool among them); without a
 * catalog it asks chatgpt.com for one. This is the catalog entry for the gateway's model.
 */
const catalog = {
  models: [
    {
      slug: 'up/m',
      display_name: 'up/m',
      description: 'a model behind the gateway',
      default_reasoning_level: 'medium',
      supported_reasoning_levels: [
        { effort: 'low', description: 'low' },
        { effort: 'medium', description: 'medium' },
      ],
      shell_type: 'shell_command',
      visibility: 'list',
      supported_in_api: true,
      priority: 1,
      upgrade: null,
      base_instructions: 'You are a coding agent.',
      supports_reasoning_summaries: true,
      default_reasoning_summary: 'auto',
      support_verbosity: true,
      default_verbosity: 'low',
      apply_patch_tool_type: 'freeform',
      web_search_tool_type: 'text_and_image',
      truncation_policy: { mode: 'tokens', limit: 10000 },
      supports_parallel_tool_calls: true,
      context_window: 128000,
      effective_context_window_percent: 95,
      experimental_supported_tools: [],
      input_modalities: ['text', 'image'],
      supports_search_tool: true,
    },
  ],
};

/** The scripted model: a patch through apply_patch first; once the tool's result is back, a final text. */
function scriptedModel(req: RecordedRequest, res: Parameters<typeof writeSse>[0]): Promise<void> {
  const messages = (req.json as { messages: Array<{ role: string }> }).messages;
  if (messages.some((m) => m.role === 'tool'))
    return writeSse(res, [
      openaiFixtures.chunk({ role: 'assistant', reasoning_content: 'The patch applied; report it.' }),
      openaiFixtures.chunk({ content: FINAL }),
      openaiFixtures.chunk({}, 'stop'),
      openaiFixtures.usageChunk(1200, 12),
    ]);
  const args = JSON.stringify({ input: PATCH });
  return writeSse(res, [
    openaiFixtures.chunk({ role: 'assistant', reasoning_content: 'I will add the file with apply_patch.' }),
    openaiFixtures.chunk({
      tool_calls: [
        { index: 0, id: 'call_patch_1', type: 'function', function: { name: 'apply_patch', arguments: '' } },
      ],
    }),
    openaiFixtures.chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(0, 25) } }] }),
    openaiFixtures.chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(25) } }] }),
    openaiFixtures.chunk({}, 'tool_calls'),
    openaiFixtures.usageChunk(1000, 40),
  ]);
}

describe(`Codex CLI through the gateway (issue 45)`, function () {
  this.timeout(300_000);
  let codex: string;
  let up: MockUpstream;
  let gw: TestGateway;
  let proxy: Awaited<ReturnType<typeof refusingProxy>>;
  let dir: string;
  let key: string;
  let accountId: string;

  before(async function () {
    try {
      codex = prereqs.ensureCodex();
    } catch (e) {
      console.log(`      Codex CLI could not be installed here (${(e as Error).message}): skipped`);
      this.skip();
    }
    up = await new MockUpstream().start();
    up.handler = scriptedModel;
    proxy = await refusingProxy();
    gw = await startTestGateway(
      operationsConfig({
        providers: [{ name: 'up', type: 'openai', api_base: `${up.url}/v1` }],
        models: [
          {
            id: 'up/m',
            pricing: { prompt: 0.000001, completion: 0.000002 },
            context_length: 128000,
            deployments: [{ provider: 'up', model: 'gpt-up' }],
          },
        ],
      }),
    );
    ({ key, accountId } = await keyedClient(gw, { credits: 5 }));
    dir = mkdtempSync(join(tmpdir(), 'gateway-codex-'));
  });
  after(async () => {
    await gw?.stop();
    await up?.stop();
    proxy?.server.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('`codex exec` answers through the gateway after a custom-tool round trip (apply_patch), with records and credit', async () => {
    const home = join(dir, 'codex-home');
    const work = join(dir, 'work');
    mkdirSync(home);
    mkdirSync(work);
    writeFileSync(join(home, 'models.json'), JSON.stringify(catalog));
    writeFileSync(
      join(home, 'config.toml'),
      [
        'model = "up/m"',
        'model_provider = "gateway"',
        `model_catalog_json = ${JSON.stringify(join(home, 'models.json'))}`,
        'check_for_update_on_startup = false',
        '',
        '[model_providers.gateway]',
        'name = "Model gateway"',
        `base_url = "${gw.url}/v1"`,
        'wire_api = "responses"',
        'env_key = "GATEWAY_API_KEY"',
        '',
        '[analytics]',
        'enabled = false',
        '',
        '[feedback]',
        'enabled = false',
        '',
      ].join('\n'),
    );
    const env = {
      PATH: process.env.PATH,
      HOME: dir,
      CODEX_HOME: home,
      GATEWAY_API_KEY: key,
      HTTPS_PROXY: proxy.url,
      HTTP_PROXY: proxy.url,
      ALL_PROXY: proxy.url,
      NO_PROXY: '127.0.0.1,localhost',
    };
    const started = Date.now();
    const r = await run(
      process.execPath,
      [codex, 'exec', '--json', '--skip-git-repo-check', '--sandbox', 'workspace-write', 'Add hello.txt saying hello.'],
      env,
      work,
      240_000,
    );
    const seconds = (Date.now() - started) / 1000;
    const events = r.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Json);
    console.log(`      codex ${prereqs.CODEX_VERSION}: exit ${r.code} in ${seconds.toFixed(1)} s`);
    for (const e of events) console.log(`      ${JSON.stringify(e).slice(0, 200)}`);
    expect(r.code, r.stderr).to.equal(0);

    // What Codex printed: the patch applied (its file_change item), then the model's final answer.
    const items = events.filter((e) => e.type === 'item.completed').map((e) => e.item as Json);
    expect(items.find((i) => i.type === 'agent_message')?.text).to.equal(FINAL);
    expect(items.some((i) => i.type === 'file_change')).to.equal(true);
    expect(readFileSync(join(work, 'hello.txt'), 'utf8')).to.equal('hello from the gateway\n');
    expect(events[events.length - 1].type).to.equal('turn.completed');

    // The tool round trip as the model saw it: apply_patch offered as a function, called, its result sent back.
    const turns = up.requests.map((q) => q.json as { tools?: Array<{ function: { name: string } }>; messages: Json[] });
    expect(turns).to.have.length(2);
    expect(turns[0].tools?.map((t) => t.function.name)).to.include('apply_patch');
    const back = turns[1].messages;
    const call = back.find((m) => m.role === 'assistant' && m.tool_calls) as { tool_calls: Json[] };
    expect(call.tool_calls[0]).to.deep.equal({
      id: 'call_patch_1',
      type: 'function',
      function: { name: 'apply_patch', arguments: JSON.stringify({ input: PATCH }) },
    });
    const result = back.find((m) => m.role === 'tool') as Json;
    expect(result.tool_call_id).to.equal('call_patch_1');
    expect(String(result.content)).to.match(/hello\.txt/);

    // Through the gateway's chain: two generation records on the key's account, and credit charged for both.
    const records = await gw.services.store.generations.list({ accountId, limit: 10 });
    expect(records).to.have.length(2);
    expect(records.map((g) => g.promptTokens).sort()).to.deep.equal([1000, 1200]);
    const charged = records.reduce((s, g) => s + g.cost, 0);
    expect(charged).to.be.greaterThan(0);
    const account = (await adminCall(gw, 'GET', `/v1/accounts/${accountId}`)).body.data as { usage: number };
    expect(account.usage).to.equal(fromNano(charged));
    // Nothing but the gateway was reached: every other host Codex tried was refused by the proxy.
    for (const line of proxy.refused) expect(line).to.match(/^CONNECT |^GET http/);
    expect(existsSync(join(home, 'config.toml'))).to.equal(true);
  });
});
