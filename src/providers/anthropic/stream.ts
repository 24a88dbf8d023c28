import type { ChatCompletionChunk, FinishReason } from '../../types/openai';
import { chunk, parseEventJson, reasoningChunk, ToolIndexes, usageChunk } from '../shared';
import { encryptedDetail, roleChunk, textDetail, toolArgsChunk, toolStartChunk } from '../shared/answer';
import type { AdapterContext, StreamTranslator, UpstreamEvent } from '../types';
import { streamError } from './errors';
import { JSON_TOOL } from './request';
import { ANTHROPIC_FORMAT, anthropicUsage, finishOf } from './response';

type Json = Record<string, unknown>;

/** Anthropic SSE events -> OpenAI chunks, one content block at a time, tool calls keeping their own index. */
export function createAnthropicTranslator(ctx: AdapterContext): StreamTranslator {
  let inputUsage: Json | undefined;
  const tools = new ToolIndexes();
  const jsonBlocks = new Set<number>();
  const thinkingBlocks = new Map<number, number>(); // block index -> reasoning_details index
  const provider = ctx.provider ?? 'anthropic';
  let output = 0;

  function blockStart(index: number, b: Json | undefined): ChatCompletionChunk[] {
    if (b?.type === 'thinking' || b?.type === 'redacted_thinking') {
      const i = thinkingBlocks.size;
      thinkingBlocks.set(index, i);
      if (b.type !== 'redacted_thinking') return [];
      return reasoningChunk(ctx, '', [encryptedDetail(String(b.data ?? ''), ANTHROPIC_FORMAT, i)]);
    }
    if (b?.type === 'tool_use' && b.name === JSON_TOOL) {
      jsonBlocks.add(index);
      return [];
    }
    if (b?.type !== 'tool_use') return [];
    return [toolStartChunk(ctx, tools.open(index), String(b.id), String(b.name))];
  }

  function blockDelta(index: number, delta: Json | undefined): ChatCompletionChunk[] {
    const thinkingIndex = thinkingBlocks.get(index) ?? 0;
    switch (delta?.type) {
      case 'text_delta':
        return [chunk(ctx, { content: String(delta.text ?? '') })];
      case 'thinking_delta': {
        const t = String(delta.thinking ?? '');
        return reasoningChunk(ctx, t, [textDetail(t, ANTHROPIC_FORMAT, thinkingIndex)]);
      }
      case 'signature_delta': {
        const detail = textDetail('', ANTHROPIC_FORMAT, thinkingIndex, String(delta.signature ?? ''));
        return reasoningChunk(ctx, '', [detail]);
      }
      case 'input_json_delta': {
        const json = String(delta.partial_json ?? '');
        if (jsonBlocks.has(index)) return [chunk(ctx, { content: json })];
        const i = tools.get(index);
        return i === undefined ? [] : [toolArgsChunk(ctx, i, json)];
      }
      default:
        return [];
    }
  }

  // A data property, not a getter: V8 kept an object literal with a getter as a dictionary, one a stream.
  const t = {
    done: false,
    push(ev: UpstreamEvent): ChatCompletionChunk[] {
      const d = parseEventJson(ev, provider) as Json;
      switch (ev.event ?? d.type) {
        case 'message_start':
          inputUsage = (d.message as { usage?: Json } | undefined)?.usage;
          return [roleChunk(ctx)];
        case 'content_block_start':
          return blockStart(Number(d.index), d.content_block as Json | undefined);
        case 'content_block_delta':
          return blockDelta(Number(d.index), d.delta as Json | undefined);
        case 'message_delta': {
          const finish: FinishReason = finishOf(String((d.delta as Json)?.stop_reason ?? ''), tools.count > 0);
          output = Number((d.usage as Json | undefined)?.output_tokens ?? 0);
          return [chunk(ctx, {}, finish)];
        }
        case 'message_stop':
          t.done = true;
          return [usageChunk(ctx, anthropicUsage(inputUsage, output))];
        case 'error':
          throw streamError(provider, d);
        default:
          return []; // ping, content_block_stop
      }
    },
    finish: () => [],
  };
  return t;
}
