import type { GatewayError } from '../../errors';
import type { StreamEnd } from '../../stream/chat-stream';
import type { StreamFramer } from '../../stream/sse-writer';
import type { ChatCompletionChunk, ChunkChoice, Usage } from '../../types/openai';
import { toAnthropicError } from '../../errors';
import { messagesUsage, stopReason } from './response';

type Json = Record<string, unknown>;
type Block = { kind: 'thinking' | 'text' | 'tool'; index: number; tool?: number };

export interface MessagesMeta {
  id: string;
  model: string;
  /** The gateway's count of the prompt, for message_start (the upstream's own count comes with message_delta). */
  inputTokens: number;
}

/**
 * Anthropic's Messages event stream from chat chunks: message_start and a ping, then content blocks one at a time
 * (thinking with thinking_delta and signature_delta, redacted_thinking, text with text_delta, tool_use with
 * input_json_delta), each closed by content_block_stop before the next opens, then message_delta (stop_reason and the
 * usage, cache counts included) and message_stop; a failure is an `error` event. Only the first choice is used.
 */
export class MessagesEvents implements StreamFramer {
  private open: Block | null = null;
  private next = 0;
  private finish: string | null = null;
  private usage: Usage | null = null;

  constructor(private readonly meta: MessagesMeta) {}

  start(): string {
    const message = {
      id: this.meta.id,
      type: 'message',
      role: 'assistant',
      model: this.meta.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: this.meta.inputTokens, output_tokens: 0 },
    };
    return ev('message_start', { type: 'message_start', message }) + ev('ping', { type: 'ping' });
  }

  chunk(chunk: ChatCompletionChunk): string {
    if (chunk.choices.length === 0) {
      if (chunk.usage) this.usage = chunk.usage;
      return '';
    }
    let out = '';
    for (const c of chunk.choices) if (c.index === 0) out += this.choice(c);
    return out;
  }

  async end(end: StreamEnd): Promise<string> {
    const usage = end.usage ?? this.usage;
    const delta = {
      type: 'message_delta',
      delta: { stop_reason: stopReason(this.finish, false), stop_sequence: null },
    };
    return (
      this.close() +
      ev('message_delta', { ...delta, usage: messagesUsage(usage) }) +
      ev('message_stop', { type: 'message_stop' })
    );
  }

  async error(e: GatewayError): Promise<string> {
    return this.close() + ev('error', toAnthropicError(e));
  }

  private choice(c: ChunkChoice): string {
    const d = c.delta;
    let out = '';
    for (const r of d.reasoning_details ?? []) {
      if (r.type === 'reasoning.encrypted') {
        out += this.startBlock('thinking', { type: 'redacted_thinking', data: r.data ?? '' }) + this.close();
        continue;
      }
      if (r.type !== 'reasoning.text') continue;
      if (this.open?.kind !== 'thinking')
        out += this.startBlock('thinking', { type: 'thinking', thinking: '', signature: '' });
      if (r.text) out += this.delta({ type: 'thinking_delta', thinking: r.text });
      if (r.signature) out += this.delta({ type: 'signature_delta', signature: r.signature });
    }
    if (!d.reasoning_details?.length && d.reasoning) {
      if (this.open?.kind !== 'thinking')
        out += this.startBlock('thinking', { type: 'thinking', thinking: '', signature: '' });
      out += this.delta({ type: 'thinking_delta', thinking: d.reasoning });
    }
    if (d.content) {
      if (this.open?.kind !== 'text') out += this.startBlock('text', { type: 'text', text: '' });
      out += this.delta({ type: 'text_delta', text: d.content });
    }
    for (const t of d.tool_calls ?? []) {
      if (t.id || this.open?.kind !== 'tool' || this.open.tool !== t.index) {
        const block = { type: 'tool_use', id: t.id ?? '', name: t.function?.name ?? '', input: {} };
        out += this.startBlock('tool', block, t.index);
      }
      if (t.function?.arguments) out += this.delta({ type: 'input_json_delta', partial_json: t.function.arguments });
    }
    if (c.finish_reason) this.finish = c.finish_reason;
    return out;
  }

  private startBlock(kind: Block['kind'], content: Json, tool?: number): string {
    const out = this.close();
    this.open = { kind, index: this.next++, tool };
    return (
      out + ev('content_block_start', { type: 'content_block_start', index: this.open.index, content_block: content })
    );
  }

  private delta(delta: Json): string {
    return ev('content_block_delta', { type: 'content_block_delta', index: this.open?.index ?? 0, delta });
  }

  private close(): string {
    if (!this.open) return '';
    const index = this.open.index;
    this.open = null;
    return ev('content_block_stop', { type: 'content_block_stop', index });
  }
}

/** One SSE event of Anthropic's stream. */
export function ev(type: string, data: object): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}
