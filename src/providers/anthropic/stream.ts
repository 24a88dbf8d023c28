import { countTextTokens } from '../../tokens/count';
import type { ChatCompletionChunk, FinishReason, Usage } from '../../types/openai';
import { chunk, parseEventJson, reasoningChunk, ToolIndexes, usageChunk } from '../shared';
import { encryptedDetail, roleChunk, textDetail, toolArgsChunk, toolStartChunk } from '../shared/answer';
import { ContentFrames, type JsonText } from '../shared/content-frame';
import type { AdapterContext, StreamTranslator, UpstreamEvent } from '../types';
import { streamError } from './errors';
import { JSON_TOOL } from './request';
import { ANTHROPIC_FORMAT, anthropicUsage, finishOf } from './response';
import { readTextDelta } from './text-delta';

type Json = Record<string, unknown>;

/**
 * Anthropic SSE events -> OpenAI chunks, one content block at a time, tool calls keeping their own index. The usage
 * `message_start` reports (input, cache reads and writes) is kept, with what `message_delta` adds (its counts are
 * cumulative), so a stream that ends early (client gone, upstream broken) is billed the upstream's own input counts
 * and the output produced so far: thinking, text and tool input, counted by the gateway until the upstream reports
 * output tokens.
 */
export function createAnthropicTranslator(ctx: AdapterContext): StreamTranslator {
  return new AnthropicStream(ctx);
}

/** One stream's translation state; a class, so every stream's object has one map (its methods on the prototype). */
class AnthropicStream implements StreamTranslator {
  done = false;
  private inputUsage: Json | undefined = undefined;
  /** Output produced so far, counted only when a stream ends without the upstream's own output count. */
  private thinkingText = '';
  private outputText = '';
  private outputReported = false;
  private output = 0;
  private readonly tools = new ToolIndexes();
  private readonly jsonBlocks = new Set<number>();
  /** Content block index -> reasoning_details index. */
  private readonly thinkingBlocks = new Map<number, number>();
  private readonly provider: string;
  /** The common text delta, read without a parse and serialised from a template (./text-delta.ts). */
  private readonly frames: ContentFrames;
  private readonly text: JsonText = { text: '', json: '' };

  constructor(private readonly ctx: AdapterContext) {
    this.provider = ctx.provider ?? 'anthropic';
    this.frames = new ContentFrames(ctx);
  }

  push(ev: UpstreamEvent): ChatCompletionChunk[] {
    return this.readsText(ev) ? [this.frames.chunk(this.text.text, this.text.json)] : this.parsed(ev);
  }

  /** One read's chunks; its common text deltas join as runs (StreamTranslator.pushEvents). */
  pushEvents(events: UpstreamEvent[], out: ChatCompletionChunk[]): void {
    const frames = this.frames;
    frames.endRun();
    for (let i = 0; i < events.length; i++) {
      const ev = events[i];
      if (this.readsText(ev)) {
        const c = frames.next(this.text.text, this.text.json);
        if (c !== null) out.push(c);
      } else {
        frames.endRun();
        for (const c of this.parsed(ev)) out.push(c);
      }
    }
  }

  /** Whether `ev` is the common text delta, read without a parse into `text` (./text-delta.ts). */
  private readsText(ev: UpstreamEvent): boolean {
    const t = this.text;
    if ((ev.event !== undefined && ev.event !== 'content_block_delta') || !readTextDelta(ev.data, t)) return false;
    this.outputText += t.text;
    return true;
  }

  private parsed(ev: UpstreamEvent): ChatCompletionChunk[] {
    const d = parseEventJson(ev, this.provider) as Json;
    switch (ev.event ?? d.type) {
      case 'message_start':
        this.inputUsage = (d.message as { usage?: Json } | undefined)?.usage;
        return [roleChunk(this.ctx)];
      case 'content_block_start':
        return this.blockStart(Number(d.index), d.content_block as Json | undefined);
      case 'content_block_delta':
        return this.blockDelta(Number(d.index), d.delta as Json | undefined);
      case 'message_delta':
        return this.messageDelta(d);
      case 'message_stop':
        this.done = true;
        return [usageChunk(this.ctx, anthropicUsage(this.inputUsage, this.output))];
      case 'error':
        throw streamError(this.provider, d);
      default:
        return []; // ping, content_block_stop
    }
  }

  finish(): ChatCompletionChunk[] {
    return [];
  }

  usageSoFar(): Usage | undefined {
    if (this.inputUsage === undefined) return undefined;
    if (this.outputReported) return anthropicUsage(this.inputUsage, this.output);
    const reasoning = countTextTokens(this.thinkingText);
    const u = anthropicUsage(this.inputUsage, reasoning + countTextTokens(this.outputText));
    if (reasoning > 0) u.completion_tokens_details = { reasoning_tokens: reasoning };
    return u;
  }

  private messageDelta(d: Json): ChatCompletionChunk[] {
    const finish: FinishReason = finishOf(String((d.delta as Json)?.stop_reason ?? ''), this.tools.count > 0);
    const u = d.usage as Json | undefined;
    this.output = Number(u?.output_tokens ?? 0);
    this.outputReported = typeof u?.output_tokens === 'number';
    // Its input and cache counts, when present, are cumulative: they replace message_start's.
    if (u) this.inputUsage = { ...this.inputUsage, ...withoutOutput(u) };
    return [chunk(this.ctx, {}, finish)];
  }

  private blockStart(index: number, b: Json | undefined): ChatCompletionChunk[] {
    if (b?.type === 'thinking' || b?.type === 'redacted_thinking') {
      const i = this.thinkingBlocks.size;
      this.thinkingBlocks.set(index, i);
      if (b.type !== 'redacted_thinking') return [];
      return reasoningChunk(this.ctx, '', [encryptedDetail(String(b.data ?? ''), ANTHROPIC_FORMAT, i)]);
    }
    if (b?.type === 'tool_use' && b.name === JSON_TOOL) {
      this.jsonBlocks.add(index);
      return [];
    }
    if (b?.type !== 'tool_use') return [];
    return [toolStartChunk(this.ctx, this.tools.open(index), String(b.id), String(b.name))];
  }

  private blockDelta(index: number, delta: Json | undefined): ChatCompletionChunk[] {
    const thinkingIndex = this.thinkingBlocks.get(index) ?? 0;
    switch (delta?.type) {
      case 'text_delta':
        this.outputText += String(delta.text ?? '');
        return [chunk(this.ctx, { content: String(delta.text ?? '') })];
      case 'thinking_delta': {
        const t = String(delta.thinking ?? '');
        this.thinkingText += t;
        return reasoningChunk(this.ctx, t, [textDetail(t, ANTHROPIC_FORMAT, thinkingIndex)]);
      }
      case 'signature_delta': {
        const detail = textDetail('', ANTHROPIC_FORMAT, thinkingIndex, String(delta.signature ?? ''));
        return reasoningChunk(this.ctx, '', [detail]);
      }
      case 'input_json_delta': {
        const json = String(delta.partial_json ?? '');
        this.outputText += json;
        if (this.jsonBlocks.has(index)) return [chunk(this.ctx, { content: json })];
        const i = this.tools.get(index);
        return i === undefined ? [] : [toolArgsChunk(this.ctx, i, json)];
      }
      default:
        return [];
    }
  }
}

/** message_delta's counts other than output (null or absent ones leave message_start's). */
function withoutOutput(u: Json): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(u))
    if (k !== 'output_tokens' && (typeof v === 'number' || (v !== null && typeof v === 'object'))) out[k] = v;
  return out;
}
