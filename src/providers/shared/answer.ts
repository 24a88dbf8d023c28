import type { ChatCompletionChunk, ReasoningDetail, ToolCall } from '../../types/openai';
import type { AdapterContext } from '../types';
import { chunk } from './index';

/** Answer-side pieces several adapters share: tool calls, the first chunk, reasoning details. */

/** An OpenAI tool call from a provider's call, its arguments given as a value (JSON-encoded here). */
export function toolCall(id: string, name: string, args: unknown): ToolCall {
  return { id, type: 'function', function: { name, arguments: JSON.stringify(args ?? {}) } };
}

/** The message content beside tool calls: null when the model only called tools. */
export function answerText(text: string, calls: ToolCall[]): string | null {
  return calls.length > 0 && !text ? null : text;
}

/** The chunk every stream starts with: the assistant role and empty content. */
export function roleChunk(ctx: AdapterContext, index = 0): ChatCompletionChunk {
  return chunk(ctx, { role: 'assistant', content: '' }, null, index);
}

/** A stream chunk opening tool call `index` (its arguments follow in later chunks unless given). */
export function toolStartChunk(
  ctx: AdapterContext,
  index: number,
  id: string,
  name: string,
  args = '',
): ChatCompletionChunk {
  return chunk(ctx, { tool_calls: [{ index, id, type: 'function', function: { name, arguments: args } }] });
}

/** A stream chunk adding to tool call `index`'s arguments. */
export function toolArgsChunk(ctx: AdapterContext, index: number, args: string): ChatCompletionChunk {
  return chunk(ctx, { tool_calls: [{ index, function: { arguments: args } }] });
}

/** Readable reasoning text with the provider's signature (null: none given). */
export function textDetail(text: string, format: string, index: number, signature?: string | null): ReasoningDetail {
  return { type: 'reasoning.text', text, ...(signature === undefined ? {} : { signature }), format, index };
}

/** Opaque (encrypted or redacted) reasoning. */
export function encryptedDetail(data: string, format: string, index: number): ReasoningDetail {
  return { type: 'reasoning.encrypted', data, format, index };
}
