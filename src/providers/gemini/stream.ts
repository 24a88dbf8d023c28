import { countTextTokens } from '../../tokens/count';
import type { ChatCompletionChunk, Usage } from '../../types/openai';
import { chunk, isRecord, parseEventJson, reasoningChunk, usageChunk } from '../shared';
import { roleChunk } from '../shared/answer';
import { ContentFrames } from '../shared/content-frame';
import type { AdapterContext, StreamTranslator, UpstreamEvent } from '../types';
import { geminiError } from './errors';
import { callId, finishOf, functionCallOf, geminiUsage, signatureDetail, type Candidate } from './response';
import { TextPartReader } from './text-part';

/** streamGenerateContent?alt=sse: each event is a GenerateContentResponse with the new parts. */
export function createGeminiTranslator(ctx: AdapterContext): StreamTranslator {
  return new GeminiStream(ctx);
}

/** One stream's translation state; a class, so every stream's object has one map (its methods on the prototype). */
class GeminiStream implements StreamTranslator {
  done = false;
  private started = false;
  private readonly callCount: number[] = [];
  private readonly detailCount: number[] = [];
  private last: Usage | undefined = undefined;
  /** Output produced so far, counted when a stream ends early beyond what the last usageMetadata reported. */
  private thoughtText = '';
  private outputText = '';
  /** The common text event, read without a full parse and serialised from a template (./text-part.ts). */
  private readonly reader = new TextPartReader();
  private readonly frames: ContentFrames;
  private readonly provider: string;

  constructor(private readonly ctx: AdapterContext) {
    this.frames = new ContentFrames(ctx);
    this.provider = ctx.provider ?? 'gemini';
  }

  push(ev: UpstreamEvent): ChatCompletionChunk[] {
    const t = this.reader.text;
    return this.readsText(ev) ? [this.frames.chunk(t.text, t.json)] : this.parsed(ev);
  }

  /** One read's chunks; its common text events join as runs (StreamTranslator.pushEvents). */
  pushEvents(events: UpstreamEvent[], out: ChatCompletionChunk[]): void {
    const frames = this.frames;
    const t = this.reader.text;
    frames.endRun();
    for (let i = 0; i < events.length; i++) {
      const ev = events[i];
      if (this.readsText(ev)) {
        const c = frames.next(t.text, t.json);
        if (c !== null) out.push(c);
      } else {
        frames.endRun();
        for (const c of this.parsed(ev)) out.push(c);
      }
    }
  }

  /** Whether `ev` is the common text event, read without a full parse (./text-part.ts). */
  private readsText(ev: UpstreamEvent): boolean {
    const r = this.reader;
    if (!this.started || !r.read(ev.data)) return false;
    this.last = geminiUsage(r.usageMetadata) ?? this.last;
    this.outputText += r.text.text;
    return true;
  }

  private parsed(ev: UpstreamEvent): ChatCompletionChunk[] {
    const { ctx } = this;
    const d = parseEventJson(ev, this.provider);
    if (isRecord(d) && isRecord(d.error)) throw geminiError(this.provider, Number(d.error.code ?? 500), d);
    if (!isRecord(d)) return [];
    const out: ChatCompletionChunk[] = [];
    if (!this.started) {
      this.started = true;
      out.push(roleChunk(ctx));
    }
    this.last = geminiUsage(d.usageMetadata) ?? this.last;
    const candidates = (d.candidates as Candidate[] | undefined) ?? [];
    if (candidates.length === 0 && isRecord(d.promptFeedback) && d.promptFeedback.blockReason) {
      this.done = true;
      out.push(chunk(ctx, {}, 'content_filter'));
    }
    candidates.forEach((c, ci) => {
      const index = c.index ?? ci;
      for (const p of c.content?.parts ?? []) out.push(...this.partChunks(p, index));
      const f = finishOf(c, (this.callCount[index] ?? 0) > 0);
      if (f) {
        this.done = true;
        out.push(chunk(ctx, {}, f, index));
      }
    });
    return out;
  }

  finish(): ChatCompletionChunk[] {
    return this.done && this.last ? [usageChunk(this.ctx, this.last)] : [];
  }

  /** The last usageMetadata's prompt and cache counts; its output, or what was produced since, if more. */
  usageSoFar(): Usage | undefined {
    const last = this.last;
    if (!last) return undefined;
    const reasoning = countTextTokens(this.thoughtText);
    const counted = reasoning + countTextTokens(this.outputText);
    if (last.completion_tokens >= counted) return last;
    const u: Usage = { ...last, completion_tokens: counted, total_tokens: last.prompt_tokens + counted };
    if (reasoning > 0) u.completion_tokens_details = { reasoning_tokens: reasoning };
    return u;
  }

  /** The chunks of one part of candidate `index`: thought or text, a function call, its signature. */
  private partChunks(p: Record<string, unknown>, index: number): ChatCompletionChunk[] {
    const { ctx } = this;
    const out: ChatCompletionChunk[] = [];
    if (typeof p.text === 'string' && p.text && p.thought) {
      this.thoughtText += p.text;
      out.push(...reasoningChunk(ctx, p.text, [], index));
    } else if (typeof p.text === 'string' && p.text) {
      this.outputText += p.text;
      out.push(chunk(ctx, { content: p.text }, null, index));
    }
    let id: string | null = null;
    if (isRecord(p.functionCall)) {
      const i = this.callCount[index] ?? 0;
      this.callCount[index] = i + 1;
      id = callId(ctx, index, i);
      const call = functionCallOf(id, p.functionCall);
      this.outputText += `${call.function?.name ?? ''} ${call.function?.arguments ?? ''}`;
      out.push(chunk(ctx, { tool_calls: [{ index: i, ...call }] }, null, index));
    }
    const sig = signatureDetail(p, id, this.detailCount[index] ?? 0);
    if (sig.length) this.detailCount[index] = (this.detailCount[index] ?? 0) + 1;
    out.push(...reasoningChunk(ctx, '', sig, index));
    return out;
  }
}
