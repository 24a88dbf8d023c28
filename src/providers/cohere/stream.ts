import type { ChatCompletionChunk } from '../../types/openai';
import { chunk, isRecord, parseEventJson, reasoningChunk, usageChunk } from '../shared';
import { roleChunk, toolArgsChunk, toolStartChunk } from '../shared/answer';
import type { AdapterContext, StreamTranslator, UpstreamEvent } from '../types';
import { cohereError, generationFailed } from './errors';
import { cohereUsage, finishOf } from './response';

/** Cohere v2 SSE: message-start, content-delta, tool-call-start/delta/end, message-end (finish_reason, usage). */
export function createCohereTranslator(ctx: AdapterContext): StreamTranslator {
  let calls = 0;
  const provider = ctx.provider ?? 'cohere';
  // A data property, not a getter: V8 kept an object literal with a getter as a dictionary, one a stream.
  const t = {
    done: false,
    push(ev: UpstreamEvent): ChatCompletionChunk[] {
      const d = parseEventJson(ev, provider) as Record<string, unknown>;
      const delta = isRecord(d.delta) ? d.delta : {};
      const msg = isRecord(delta.message) ? delta.message : {};
      switch (ev.event ?? d.type) {
        case 'message-start':
          return [roleChunk(ctx)];
        case 'content-delta': {
          const c = isRecord(msg.content) ? msg.content : {};
          if (typeof c.thinking === 'string') return reasoningChunk(ctx, c.thinking);
          return [chunk(ctx, { content: String(c.text ?? '') })];
        }
        case 'tool-call-start': {
          const t = msg.tool_calls as { id: string; function: { name: string; arguments?: string } };
          return [toolStartChunk(ctx, calls++, t.id, t.function.name, t.function.arguments ?? '')];
        }
        case 'tool-call-delta': {
          const t = msg.tool_calls as { function: { arguments?: string } };
          return [toolArgsChunk(ctx, calls - 1, t.function.arguments ?? '')];
        }
        case 'message-end':
          // finish_reason ERROR: the generation failed upstream after the stream began.
          if (delta.finish_reason === 'ERROR') {
            throw generationFailed(provider, typeof delta.error === 'string' ? delta.error : undefined);
          }
          t.done = true;
          return [chunk(ctx, {}, finishOf(delta.finish_reason)), usageChunk(ctx, cohereUsage(delta.usage))];
        default:
          if (d.type === 'error' || ev.event === 'error') throw cohereError(provider, 500, d);
          return [];
      }
    },
    finish: () => [],
  };
  return t;
}
