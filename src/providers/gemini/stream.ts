import { countTextTokens } from '../../tokens/count';
import type { ChatCompletionChunk, Usage } from '../../types/openai';
import { chunk, isRecord, parseEventJson, reasoningChunk, usageChunk } from '../shared';
import { roleChunk } from '../shared/answer';
import type { AdapterContext, StreamTranslator, UpstreamEvent } from '../types';
import { geminiError } from './errors';
import { callId, finishOf, functionCallOf, geminiUsage, signatureDetail, type Candidate } from './response';

/** streamGenerateContent?alt=sse: each event is a GenerateContentResponse with the new parts. */
export function createGeminiTranslator(ctx: AdapterContext): StreamTranslator {
  let started = false;
  const callCount: number[] = [];
  const detailCount: number[] = [];
  let last: Usage | undefined;
  /** Output produced so far, counted when a stream ends early beyond what the last usageMetadata reported. */
  let thoughtText = '';
  let outputText = '';

  /** The chunks of one part of candidate `index`: thought or text, a function call, its signature. */
  function partChunks(p: Record<string, unknown>, index: number): ChatCompletionChunk[] {
    const out: ChatCompletionChunk[] = [];
    if (typeof p.text === 'string' && p.text && p.thought) {
      thoughtText += p.text;
      out.push(...reasoningChunk(ctx, p.text, [], index));
    } else if (typeof p.text === 'string' && p.text) {
      outputText += p.text;
      out.push(chunk(ctx, { content: p.text }, null, index));
    }
    let id: string | null = null;
    if (isRecord(p.functionCall)) {
      const i = callCount[index] ?? 0;
      callCount[index] = i + 1;
      id = callId(ctx, index, i);
      const call = functionCallOf(id, p.functionCall);
      outputText += `${call.function?.name ?? ''} ${call.function?.arguments ?? ''}`;
      out.push(chunk(ctx, { tool_calls: [{ index: i, ...call }] }, null, index));
    }
    const sig = signatureDetail(p, id, detailCount[index] ?? 0);
    if (sig.length) detailCount[index] = (detailCount[index] ?? 0) + 1;
    out.push(...reasoningChunk(ctx, '', sig, index));
    return out;
  }

  // A data property, not a getter: V8 kept an object literal with a getter as a dictionary, one a stream.
  const t = {
    done: false,
    push(ev: UpstreamEvent): ChatCompletionChunk[] {
      const d = parseEventJson(ev, ctx.provider ?? 'gemini');
      if (isRecord(d) && isRecord(d.error)) throw geminiError(ctx.provider ?? 'gemini', Number(d.error.code ?? 500), d);
      if (!isRecord(d)) return [];
      const out: ChatCompletionChunk[] = [];
      if (!started) {
        started = true;
        out.push(roleChunk(ctx));
      }
      last = geminiUsage(d.usageMetadata) ?? last;
      const candidates = (d.candidates as Candidate[] | undefined) ?? [];
      if (candidates.length === 0 && isRecord(d.promptFeedback) && d.promptFeedback.blockReason) {
        t.done = true;
        out.push(chunk(ctx, {}, 'content_filter'));
      }
      candidates.forEach((c, ci) => {
        const index = c.index ?? ci;
        for (const p of c.content?.parts ?? []) out.push(...partChunks(p, index));
        const f = finishOf(c, (callCount[index] ?? 0) > 0);
        if (f) {
          t.done = true;
          out.push(chunk(ctx, {}, f, index));
        }
      });
      return out;
    },
    finish: () => (t.done && last ? [usageChunk(ctx, last)] : []),
    /** The last usageMetadata's prompt and cache counts; its output, or what was produced since, if more. */
    usageSoFar(): Usage | undefined {
      if (!last) return undefined;
      const reasoning = countTextTokens(thoughtText);
      const counted = reasoning + countTextTokens(outputText);
      if (last.completion_tokens >= counted) return last;
      const u: Usage = { ...last, completion_tokens: counted, total_tokens: last.prompt_tokens + counted };
      if (reasoning > 0) u.completion_tokens_details = { reasoning_tokens: reasoning };
      return u;
    },
  };
  return t;
}
