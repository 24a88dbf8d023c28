/**
 * @module
 * What an entry holds: the whole answer, a chat completion (a streamed answer assembled from its chunks) or an
 * embeddings answer, as JSON text. Stored once, it is served either way: as the plain answer, or as a stream of
 * chunks of the usual shape (role and content, tool calls, the finish reason, then the usage chunk; the SSE writer adds
 * `[DONE]`). A hit carries the request's own id and the time of the hit; the rest is the stored answer.
 */
import {
  ChatStream,
  type ChatCompletion,
  type ChatCompletionChunk,
  type ChatResult,
  type CompletionChoice,
  type EmbeddingsResponse,
  type ToolCall,
  type Usage,
} from '../../src/plugin';

export type Entry = { kind: 'completion'; body: ChatCompletion } | { kind: 'embeddings'; body: EmbeddingsResponse };

/** Assembles a chat completion from a stream's chunks as they pass (the chunks are not kept). */
export class StreamAssembler {
  private readonly choices: CompletionChoice[] = [];
  private readonly calls: ToolCall[][] = [];
  private head: ChatCompletionChunk | undefined;
  usage: Usage | undefined;

  push(chunk: ChatCompletionChunk): void {
    this.head ??= chunk;
    if (chunk.choices.length === 0 && chunk.usage) this.usage = structuredClone(chunk.usage);
    for (const c of chunk.choices) {
      const ch = (this.choices[c.index] ??= {
        index: c.index,
        message: { role: 'assistant', content: null },
        finish_reason: null,
      });
      const m = ch.message;
      const d = c.delta;
      if (d.content) m.content = (typeof m.content === 'string' ? m.content : '') + d.content;
      if (d.refusal) m.refusal = (m.refusal ?? '') + d.refusal;
      if (typeof d.reasoning === 'string') m.reasoning = (m.reasoning ?? '') + d.reasoning;
      if (d.reasoning_details) (m.reasoning_details ??= []).push(...structuredClone(d.reasoning_details));
      for (const t of d.tool_calls ?? []) {
        const calls = (this.calls[c.index] ??= []);
        const call = (calls[t.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
        if (t.id) call.id = t.id;
        if (t.function?.name) call.function.name += t.function.name;
        if (t.function?.arguments) call.function.arguments += t.function.arguments;
      }
      if (c.finish_reason) ch.finish_reason = c.finish_reason;
    }
  }

  /** The answer the stream made; undefined when it had no chunk with a choice. */
  completion(): ChatCompletion | undefined {
    if (!this.head || this.choices.length === 0) return undefined;
    const choices = this.choices.filter(Boolean);
    for (const ch of choices) {
      const calls = this.calls[ch.index]?.filter(Boolean);
      if (calls?.length) ch.message.tool_calls = calls;
    }
    const { id, created, model, system_fingerprint } = this.head;
    return {
      id,
      object: 'chat.completion',
      created,
      model,
      choices,
      ...(this.usage ? { usage: this.usage } : {}),
      ...(system_fingerprint ? { system_fingerprint } : {}),
    };
  }
}

/** The chunks that stream a completion: per choice its message, its tool calls, its finish; then the usage chunk. */
export function chunksOf(c: ChatCompletion): ChatCompletionChunk[] {
  const head = { id: c.id, object: 'chat.completion.chunk' as const, created: c.created, model: c.model };
  const fp = c.system_fingerprint ? { system_fingerprint: c.system_fingerprint } : {};
  const out: ChatCompletionChunk[] = [];
  const one = (
    index: number,
    delta: ChatCompletionChunk['choices'][0]['delta'],
    finish: CompletionChoice['finish_reason'],
  ) => out.push({ ...head, ...fp, choices: [{ index, delta, logprobs: null, finish_reason: finish }] });
  for (const ch of c.choices) {
    const m = ch.message;
    const text = typeof m.content === 'string' ? m.content : '';
    const delta: ChatCompletionChunk['choices'][0]['delta'] = { role: 'assistant', content: text };
    if (m.refusal) delta.refusal = m.refusal;
    if (m.reasoning) delta.reasoning = m.reasoning;
    if (m.reasoning_details) delta.reasoning_details = m.reasoning_details;
    one(ch.index, delta, null);
    if (m.tool_calls?.length)
      one(
        ch.index,
        { tool_calls: m.tool_calls.map((t, index) => ({ index, id: t.id, type: t.type, function: t.function })) },
        null,
      );
    one(ch.index, {}, ch.finish_reason);
  }
  if (c.usage) out.push({ ...head, ...fp, choices: [], usage: c.usage });
  return out;
}

/** Replays stored chunks, one resolved promise each; `return` stops it (the client left). */
class Replay implements AsyncIterator<ChatCompletionChunk> {
  private i = 0;
  constructor(private readonly chunks: ChatCompletionChunk[]) {}
  next(): Promise<IteratorResult<ChatCompletionChunk>> {
    return Promise.resolve(
      this.i < this.chunks.length ? { done: false, value: this.chunks[this.i++] } : { done: true, value: undefined },
    );
  }
  return(): Promise<IteratorResult<ChatCompletionChunk>> {
    this.i = this.chunks.length;
    return Promise.resolve({ done: true, value: undefined });
  }
}

/** The result a hit leaves for the chain: the stored answer under this request's id, plain or streamed. */
export function resultOf(text: string, id: string, streamed: boolean): ChatResult {
  const entry = JSON.parse(text) as Entry;
  if (entry.kind === 'embeddings') return { kind: 'embeddings', body: entry.body };
  const body = entry.body;
  body.id = id;
  body.created = Math.floor(Date.now() / 1000);
  if (!streamed) return { kind: 'completion', body };
  const replay = new Replay(chunksOf(body));
  const usage = body.usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  return {
    kind: 'stream',
    stream: new ChatStream(
      replay,
      () => replay.return(),
      () => usage,
    ),
  };
}
