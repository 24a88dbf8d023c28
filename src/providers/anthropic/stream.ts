import { countTextTokens } from '../../tokens/count';
import type { ChatCompletionChunk, FinishReason, Usage } from '../../types/openai';
import { chunk, parseEventJson, reasoningChunk, ToolIndexes, usageChunk } from '../shared';
import { encryptedDetail, roleChunk, textDetail, toolArgsChunk, toolStartChunk } from '../shared/answer';
import type { AdapterContext, StreamTranslator, UpstreamEvent } from '../types';
import { streamError } from './errors';
import { JSON_TOOL } from './request';
import { ANTHROPIC_FORMAT, anthropicUsage, finishOf } from './response';

type Json = Record<string, unknown>;

/**
 * Anthropic SSE events -> OpenAI chunks, one content block at a time, tool calls keeping their own index. The usage
 * `message_start` reports (input, cache reads and writes) is kept, with what `message_delta` adds (its counts are
 * cumulative), so a stream that ends early (client gone, upstream broken) is billed the upstream's own input counts
 * and the output produced so far: thinking, text and tool input, counted by the gateway until the upstream reports
 * output tokens.
 */
export function createAnthropicTranslator(ctx: AdapterContext): StreamTranslator {
  let inputUsage: Json | undefined;
  /** Output produced so far, counted only when a stream ends without the upstream's own output count. */
  let thinkingText = '';
  let outputText = '';
  let outputReported = false;
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
        outputText += String(delta.text ?? '');
        return [chunk(ctx, { content: String(delta.text ?? '') })];
      case 'thinking_delta': {
        const t = String(delta.thinking ?? '');
        thinkingText += t;
        return reasoningChunk(ctx, t, [textDetail(t, ANTHROPIC_FORMAT, thinkingIndex)]);
      }
      case 'signature_delta': {
        const detail = textDetail('', ANTHROPIC_FORMAT, thinkingIndex, String(delta.signature ?? ''));
        return reasoningChunk(ctx, '', [detail]);
      }
      case 'input_json_delta': {
        const json = String(delta.partial_json ?? '');
        outputText += json;
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
          const u = d.usage as Json | undefined;
          output = Number(u?.output_tokens ?? 0);
          outputReported = typeof u?.output_tokens === 'number';
          // Its input and cache counts, when present, are cumulative: they replace message_start's.
          if (u) inputUsage = { ...inputUsage, ...withoutOutput(u) };
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
    usageSoFar(): Usage | undefined {
      if (inputUsage === undefined) return undefined;
      if (outputReported) return anthropicUsage(inputUsage, output);
      const reasoning = countTextTokens(thinkingText);
      const u = anthropicUsage(inputUsage, reasoning + countTextTokens(outputText));
      if (reasoning > 0) u.completion_tokens_details = { reasoning_tokens: reasoning };
      return u;
    },
  };
  return t;
}

/** message_delta's counts other than output (null or absent ones leave message_start's). */
function withoutOutput(u: Json): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(u))
    if (k !== 'output_tokens' && (typeof v === 'number' || (v !== null && typeof v === 'object'))) out[k] = v;
  return out;
}
