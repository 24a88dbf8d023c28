import OpenAI from 'openai';
import { startTestGateway, testConfig, type TestGateway } from './gateway';
import { MockUpstream } from './mock-upstream';

export interface ProviderRig {
  up: MockUpstream;
  gw: TestGateway;
  client: OpenAI;
  stop(): Promise<void>;
}

/** A loopback mock of one provider, a gateway with model `p/m` on it, and the openai SDK pointed at the gateway. */
export async function providerRig(
  type: string,
  provider: Record<string, unknown> = {},
  deployment: Record<string, unknown> = {},
): Promise<ProviderRig> {
  const up = await new MockUpstream().start();
  let gw: TestGateway;
  try {
    gw = await startTestGateway(
      testConfig({
        providers: [{ name: 'p', type, api_base: up.url, api_key: 'sk-provider-key', ...provider }],
        models: [{ id: 'p/m', deployments: [{ provider: 'p', model: 'native-model', ...deployment }] }],
        plugins: ['routing'],
      }),
    );
  } catch (e) {
    await up.stop();
    throw e;
  }
  const client = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: 'x', maxRetries: 0 });
  return { up, gw, client, stop: async () => (await gw.stop(), await up.stop()) };
}

export const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

/** Collect a streamed answer the way a client does: text, tool calls by index, finish reason, usage. */
export async function collect(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>) {
  let text = '';
  let role: string | undefined;
  const calls: Array<{ id?: string; name?: string; args: string }> = [];
  const finishes: string[] = [];
  let usage: OpenAI.CompletionUsage | undefined;
  let chunks = 0;
  for await (const c of stream) {
    chunks++;
    const ch = c.choices[0];
    if (c.usage) usage = c.usage;
    if (!ch) continue;
    role ??= ch.delta.role ?? undefined;
    text += ch.delta.content ?? '';
    for (const t of ch.delta.tool_calls ?? []) {
      const call = (calls[t.index] ??= { args: '' });
      if (t.id) call.id = t.id;
      if (t.function?.name) call.name = t.function.name;
      call.args += t.function?.arguments ?? '';
    }
    if (ch.finish_reason) finishes.push(ch.finish_reason);
  }
  return { text, role, calls, finishes, usage, chunks };
}

/** The streamed request most provider tests make (usage asked, the weather tool offered), collected. */
export async function streamWithWeatherTool(rig: ProviderRig) {
  return collect(
    await rig.client.chat.completions.create({
      model: 'p/m',
      stream: true,
      stream_options: { include_usage: true },
      tools: [weatherTool],
      messages: [{ role: 'user', content: 'x' }],
    }),
  );
}
