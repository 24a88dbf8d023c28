import type { ChatCompletion, ChatCompletionChunk, Usage } from '../../src/plugin';

/** What one choice said, however it arrived. */
export interface ChoiceParts {
  text: string;
  refusal: string;
  toolCalls: Array<{ id: string; name: string; arguments: string }>;
  finishReason: string | null;
}

export function partsOfCompletion(c: ChatCompletion): ChoiceParts[] {
  const out: ChoiceParts[] = [];
  for (const ch of c.choices) {
    const m = ch.message;
    out[ch.index] = {
      text: typeof m.content === 'string' ? m.content : '',
      refusal: typeof m.refusal === 'string' ? m.refusal : '',
      toolCalls: (m.tool_calls ?? []).map((t) => ({
        id: t.id,
        name: t.function.name,
        arguments: t.function.arguments,
      })),
      finishReason: ch.finish_reason,
    };
  }
  return out;
}

/** Assembles choices from stream chunks as they pass: only the message text, never the frames. */
export class StreamAssembler {
  readonly choices: ChoiceParts[] = [];

  push(chunk: ChatCompletionChunk): void {
    for (const c of chunk.choices) {
      const p = (this.choices[c.index] ??= { text: '', refusal: '', toolCalls: [], finishReason: null });
      const d = c.delta;
      if (d.content) p.text += d.content;
      if (d.refusal) p.refusal += d.refusal;
      for (const t of d.tool_calls ?? []) {
        const call = (p.toolCalls[t.index] ??= { id: '', name: '', arguments: '' });
        if (t.id) call.id = t.id;
        if (t.function?.name) call.name += t.function.name;
        if (t.function?.arguments) call.arguments += t.function.arguments;
      }
      if (c.finish_reason) p.finishReason = c.finish_reason;
    }
  }
}

export interface ResponseMeta {
  id: string;
  model: string;
  createdAt: number;
  status: 'completed' | 'incomplete';
  usage: Usage | null;
  /** false: the model's privacy setting keeps content out of the store (usage stays). */
  withContent: boolean;
}

/**
 * The stored response: `output` has one `message` item per choice (its text as an
 * `output_text` part, a refusal as a `refusal` part), followed by that choice's tool calls
 * as `function_call` items. A choice that only called tools has no message item.
 */
export function toResponse(parts: ChoiceParts[], meta: ResponseMeta): Record<string, unknown> {
  const output: Array<Record<string, unknown>> = [];
  if (meta.withContent) {
    parts.forEach((p, i) => {
      if (!p) return;
      const itemStatus = meta.status === 'completed' ? 'completed' : 'incomplete';
      const content: Array<Record<string, unknown>> = [];
      if (p.text || (!p.refusal && p.toolCalls.length === 0))
        content.push({ type: 'output_text', text: p.text, annotations: [] });
      if (p.refusal) content.push({ type: 'refusal', refusal: p.refusal });
      if (content.length > 0)
        output.push({
          type: 'message',
          id: `msg_${meta.id.replace(/^chatcmpl-/, '')}_${i}`,
          role: 'assistant',
          status: itemStatus,
          content,
        });
      p.toolCalls.forEach((t, j) => {
        if (t)
          output.push({
            type: 'function_call',
            id: `fc_${meta.id.replace(/^chatcmpl-/, '')}_${i}_${j}`,
            call_id: t.id,
            name: t.name,
            arguments: t.arguments,
            status: itemStatus,
          });
      });
    });
  }
  const u = meta.usage;
  return {
    id: meta.id,
    object: 'response',
    created_at: Math.floor(meta.createdAt / 1000),
    model: meta.model,
    status: meta.status,
    output,
    usage: u
      ? {
          input_tokens: u.prompt_tokens,
          input_tokens_details: { cached_tokens: u.prompt_tokens_details?.cached_tokens ?? 0 },
          output_tokens: u.completion_tokens,
          output_tokens_details: { reasoning_tokens: u.completion_tokens_details?.reasoning_tokens ?? 0 },
          total_tokens: u.total_tokens,
        }
      : null,
    finish_reasons: parts.map((p) => p?.finishReason ?? null),
    content_stored: meta.withContent,
  };
}
