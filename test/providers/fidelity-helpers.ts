import { expect } from 'chai';
import { postJson, sseData } from '../helpers/gateway';
import type { ProviderRig } from '../helpers/provider-gateway';
import type { ChatCompletion, ChatCompletionChunk, ReasoningDetail, Usage } from '../../src/types/openai';

export interface ErrorBody {
  error: { message: string; type: string; code: string; param: string | null };
}

/** A chat answer as JSON (raw fetch, so fields the openai SDK does not type can be sent and read). */
export async function chat(
  rig: ProviderRig,
  body: Record<string, unknown>,
): Promise<{ status: number; json: ChatCompletion & Partial<ErrorBody>; headers: Headers }> {
  const res = await postJson(`${rig.gw.url}/v1/chat/completions`, { model: 'p/m', ...body });
  return { status: res.status, json: (await res.json()) as ChatCompletion & Partial<ErrorBody>, headers: res.headers };
}

/** A streamed answer's chunks (parsed), its [DONE], and what a client accumulates: text, reasoning, reasoning_details by index. */
export async function chatStream(rig: ProviderRig, body: Record<string, unknown>) {
  const res = await postJson(`${rig.gw.url}/v1/chat/completions`, {
    model: 'p/m',
    stream: true,
    stream_options: { include_usage: true },
    ...body,
  });
  expect(res.status).to.equal(200);
  const frames = sseData(await res.text());
  const done = frames[frames.length - 1] === '[DONE]';
  const chunks = frames
    .filter((f) => f !== '[DONE]')
    .map((f) => JSON.parse(f) as ChatCompletionChunk & Partial<ErrorBody>);
  let text = '';
  let reasoning = '';
  const details: ReasoningDetail[] = [];
  const calls: Array<{ id?: string; name?: string; args: string }> = [];
  const finishes: string[] = [];
  let usage: Usage | undefined;
  let error: ErrorBody['error'] | undefined;
  for (const c of chunks) {
    if (c.error) error = c.error;
    if (c.usage) usage = c.usage;
    const d = c.choices?.[0]?.delta;
    if (c.choices?.[0]?.finish_reason) finishes.push(c.choices[0].finish_reason);
    if (!d) continue;
    text += d.content ?? '';
    reasoning += d.reasoning ?? '';
    for (const r of d.reasoning_details ?? []) {
      const acc = (details[r.index ?? 0] ??= { ...r, text: '' });
      acc.text += r.text ?? '';
      if (r.signature) acc.signature = r.signature;
      if (r.data) acc.data = r.data;
      if (r.id) acc.id = r.id;
      if (r.format) acc.format = r.format;
    }
    for (const t of d.tool_calls ?? []) {
      const call = (calls[t.index] ??= { args: '' });
      if (t.id) call.id = t.id;
      if (t.function?.name) call.name = t.function.name;
      call.args += t.function?.arguments ?? '';
    }
  }
  return { chunks, done, text, reasoning, details, calls, finishes, usage, error };
}
