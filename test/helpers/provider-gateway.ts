import OpenAI from 'openai';
import { postJson, sseData, startTestGateway, testConfig, type TestGateway } from './gateway';
import { MockUpstream, type RecordedRequest } from './mock-upstream';
import { sdkClient } from './sdk';

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
  model: Record<string, unknown> = {},
): Promise<ProviderRig> {
  const up = await new MockUpstream().start();
  let gw: TestGateway;
  try {
    gw = await startTestGateway(
      testConfig({
        providers: [{ name: 'p', type, api_base: up.url, api_key: 'sk-provider-key', ...provider }],
        models: [{ id: 'p/m', deployments: [{ provider: 'p', model: 'native-model', ...deployment }], ...model }],
        plugins: ['routing'],
      }),
    );
  } catch (e) {
    await up.stop();
    throw e;
  }
  const client = sdkClient(gw, 'x');
  return { up, gw, client, stop: async () => (await gw.stop(), await up.stop()) };
}

/**
 * A rig for the enclosing mocha `describe`: started in `before`, stopped in `after`. The object returned is
 * filled in when `before` has run, so tests read `rig.up`, `rig.gw` and `rig.client` as usual.
 */
export function useProviderRig(
  type: string,
  provider: Record<string, unknown> = {},
  deployment: Record<string, unknown> = {},
): ProviderRig {
  const rig = {} as ProviderRig;
  before(async () => {
    Object.assign(rig, await providerRig(type, provider, deployment));
  });
  after(() => rig.stop());
  return rig;
}

/** The last request the rig's mock upstream received. */
export function lastRequest(rig: ProviderRig): RecordedRequest {
  return rig.up.requests[rig.up.requests.length - 1];
}

/** The JSON body of the last request the rig's mock upstream received. */
export function lastSent(rig: ProviderRig): Record<string, unknown> {
  return lastRequest(rig).json as Record<string, unknown>;
}

/** POST a chat request to the rig's gateway by raw fetch: model `p/m` and one user message `x` unless given. */
export function postChat(rig: ProviderRig, body: Record<string, unknown> = {}): Promise<Response> {
  return postJson(`${rig.gw.url}/v1/chat/completions`, {
    model: 'p/m',
    messages: [{ role: 'user', content: 'x' }],
    ...body,
  });
}

/** The SSE data frames (raw, `[DONE]` included) of a streamed chat request with no usage asked. */
export async function streamFrames(rig: ProviderRig, body: Record<string, unknown> = {}): Promise<string[]> {
  return sseData(await (await postChat(rig, { stream: true, ...body })).text());
}

/** The `error` of a stream's last frame (a test that expects the stream to end in an error event). */
export function lastFrameError(frames: string[]): { message: string; code: string } {
  return (JSON.parse(frames[frames.length - 1]) as { error: { message: string; code: string } }).error;
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

type StreamParams = Partial<OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming>;

/** A chat request streamed by the openai SDK and collected: model `p/m`, usage asked, one message `x`, unless given. */
export async function streamChat(rig: ProviderRig, params: StreamParams = {}) {
  return collect(
    await rig.client.chat.completions.create({
      model: 'p/m',
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'x' }],
      ...params,
      stream: true,
    }),
  );
}

/** The streamed request most provider tests make (usage asked, the weather tool offered), collected. */
export async function streamWithWeatherTool(rig: ProviderRig) {
  return streamChat(rig, { tools: [weatherTool] });
}
