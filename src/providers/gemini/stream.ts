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

  /** The chunks of one part of candidate `index`: thought or text, a function call, its signature. */
  function partChunks(p: Record<string, unknown>, index: number): ChatCompletionChunk[] {
    const out: ChatCompletionChunk[] = [];
    if (typeof p.text === 'string' && p.text && p.thought) out.push(...reasoningChunk(ctx, p.text, [], index));
    else if (typeof p.text === 'string' && p.text) out.push(chunk(ctx, { content: p.text }, null, index));
    let id: string | null = null;
    if (isRecord(p.functionCall)) {
      const i = callCount[index] ?? 0;
      callCount[index] = i + 1;
      id = callId(ctx, index, i);
      out.push(chunk(ctx, { tool_calls: [{ index: i, ...functionCallOf(id, p.functionCall) }] }, null, index));
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
  };
  return t;
}
