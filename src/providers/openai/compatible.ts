import { errors } from '../../errors';
import type { ChatCompletionChunk } from '../../types/openai';
import type { AdapterContext, StreamTranslator, UpstreamEvent } from '../types';
import { createOpenAITranslator } from './response';

/**
 * The OpenAI translator for upstreams that speak OpenAI's stream with small differences:
 * usage on the finish chunk (Mistral) is split into its own usage chunk, chunks with no
 * choices and no usage (Azure's prompt_filter_results) are dropped, a missing tool-call
 * index is filled in, and `[DONE]` may be absent when a finish and usage came (Mistral).
 */
export function createCompatibleTranslator(ctx: AdapterContext, provider: string): StreamTranslator {
  const inner = createOpenAITranslator(ctx, provider);
  let finished = false;
  let sawUsage = false;
  const seenCalls: number[] = [];
  return {
    get done() {
      return inner.done || (finished && sawUsage);
    },
    push(ev: UpstreamEvent): ChatCompletionChunk[] {
      const out: ChatCompletionChunk[] = [];
      for (const c of inner.push(ev)) {
        if (c.choices.length === 0) {
          if (c.usage) {
            sawUsage = true;
            out.push(c);
          }
          continue;
        }
        for (const ch of c.choices) {
          ch.delta.tool_calls?.forEach((t, k) => {
            if (typeof t.index !== 'number') t.index = (seenCalls[ch.index] ?? 0) + k;
          });
          if (ch.delta.tool_calls?.length) seenCalls[ch.index] = Math.max(seenCalls[ch.index] ?? 0, ...ch.delta.tool_calls.map((t) => t.index + 1));
          if (ch.finish_reason) finished = true;
        }
        const usage = c.usage;
        if (usage && c.choices.length > 0) {
          c.usage = null;
          out.push(c, { id: c.id, object: 'chat.completion.chunk', created: c.created, model: c.model, choices: [], usage });
          sawUsage = true;
        } else out.push(c);
      }
      return out;
    },
    finish(): ChatCompletionChunk[] {
      if (!inner.done && !finished) throw errors.streamInterrupted(ctx.provider ?? provider, 'the upstream closed the stream without finishing it');
      return [];
    },
  };
}
