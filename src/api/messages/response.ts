import type { ChatCompletion, ChatMessage, ReasoningDetail, Usage } from '../../types/openai';

type Json = Record<string, unknown>;

/** Anthropic's stop reasons for the gateway's finish reasons. */
export function stopReason(finish: string | null, stopped: boolean): string | null {
  if (finish === null) return null;
  if (finish === 'length') return 'max_tokens';
  if (finish === 'tool_calls' || finish === 'function_call') return 'tool_use';
  if (finish === 'content_filter') return 'refusal';
  return stopped ? 'stop_sequence' : 'end_turn';
}

/** Anthropic's usage from the gateway's: input without cache reads and writes (Anthropic counts them apart). */
export function messagesUsage(u: Usage | null | undefined): Json {
  const read = u?.prompt_tokens_details?.cached_tokens ?? 0;
  const write = u?.prompt_tokens_details?.cache_write_tokens ?? 0;
  const out: Json = {
    input_tokens: Math.max(0, (u?.prompt_tokens ?? 0) - read - write),
    output_tokens: u?.completion_tokens ?? 0,
    cache_read_input_tokens: read,
    cache_creation_input_tokens: write,
  };
  if (typeof u?.cost === 'number') out.cost = u.cost;
  return out;
}

/** A thinking detail as Anthropic's block: readable thinking with its signature, or redacted (encrypted) thinking. */
export function thinkingBlock(d: ReasoningDetail): Json | null {
  if (d.type === 'reasoning.encrypted') return { type: 'redacted_thinking', data: d.data ?? '' };
  if (d.type === 'reasoning.text') return { type: 'thinking', thinking: d.text ?? '', signature: d.signature ?? '' };
  return null;
}

/** A tool call's arguments as the object Anthropic's `input` is (arguments that are not an object: under `value`). */
export function toolInput(args: string): Json {
  try {
    const v: unknown = JSON.parse(args || '{}');
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Json) : { value: v };
  } catch {
    return { arguments: args };
  }
}

function contentOf(m: ChatMessage): Json[] {
  const out: Json[] = [];
  for (const d of m.reasoning_details ?? []) {
    const b = thinkingBlock(d);
    if (b) out.push(b);
  }
  if (out.length === 0 && typeof m.reasoning === 'string' && m.reasoning)
    out.push({ type: 'thinking', thinking: m.reasoning, signature: '' });
  const text = typeof m.content === 'string' ? m.content : '';
  if (text) out.push({ type: 'text', text });
  for (const t of m.tool_calls ?? [])
    out.push({ type: 'tool_use', id: t.id, name: t.function.name, input: toolInput(t.function.arguments) });
  return out;
}

/** Which of the request's stop sequences the text ends with, if any (OpenAI does not say; Anthropic does). */
function stoppedBy(text: string, stops: readonly string[]): string | null {
  for (const s of stops) if (s && text.endsWith(s)) return s;
  return null;
}

/** A chat completion as an Anthropic Message (the first choice: Messages has no `n`). */
export function toMessage(c: ChatCompletion, model: string, stops: readonly string[]): Json {
  const choice = c.choices[0];
  const m = choice?.message ?? { role: 'assistant', content: null };
  const stop =
    choice?.finish_reason === 'stop' ? stoppedBy(typeof m.content === 'string' ? m.content : '', stops) : null;
  return {
    id: messageId(c.id),
    type: 'message',
    role: 'assistant',
    model,
    content: contentOf(m),
    stop_reason: stopReason(choice?.finish_reason ?? null, stop !== null),
    stop_sequence: stop,
    usage: messagesUsage(c.usage),
  };
}

/** The completion id in Anthropic's form (`msg_...`), the same one the generation record keeps after its prefix. */
export function messageId(id: string): string {
  return `msg_${id.replace(/^chatcmpl-/, '')}`;
}
