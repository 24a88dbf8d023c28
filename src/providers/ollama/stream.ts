import type { ChatCompletionChunk } from '../../types/openai';
import { chunk, isRecord, parseEventJson, reasoningChunk, usageChunk } from '../shared';
import { roleChunk } from '../shared/answer';
import type { AdapterContext, StreamTranslator, UpstreamEvent } from '../types';
import { ollamaError } from './errors';
import { finishOf, ollamaUsage, replyText, thinkingOf, toolCalls } from './response';

/** NDJSON: one object per line, the last with done: true and the token counts. */
export function createOllamaTranslator(ctx: AdapterContext): StreamTranslator {
  let started = false;
  let calls = 0;
  // A data property, not a getter: V8 kept an object literal with a getter as a dictionary, one a stream.
  const t = {
    done: false,
    push(ev: UpstreamEvent): ChatCompletionChunk[] {
      const d = parseEventJson(ev, ctx.provider ?? 'ollama', 'a stream line');
      if (!isRecord(d)) return [];
      if (typeof d.error === 'string') throw ollamaError(ctx.provider ?? 'ollama', 500, d);
      const out: ChatCompletionChunk[] = [];
      if (!started) {
        started = true;
        out.push(roleChunk(ctx));
      }
      const text = replyText(d);
      out.push(...reasoningChunk(ctx, thinkingOf(d)));
      if (text) out.push(chunk(ctx, { content: text }));
      for (const t of toolCalls(ctx, d.message, calls))
        out.push(chunk(ctx, { tool_calls: [{ index: calls++, ...t }] }));
      if (d.done === true) {
        t.done = true;
        out.push(chunk(ctx, {}, finishOf(d, calls)), usageChunk(ctx, ollamaUsage(d)));
      }
      return out;
    },
    finish: () => [],
  };
  return t;
}
