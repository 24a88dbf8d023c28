import { errors } from '../../errors';
import type { ChatCompletion, ChatCompletionChunk } from '../../types/openai';
import type { AdapterContext, StreamTranslator, UpstreamEvent } from '../types';
import { errorFromBody } from './errors';
import { parseEventJson } from '../shared';

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** An OpenAI-shaped answer, with the gateway's id and the client's model name. */
export function parseOpenAIResponse(body: unknown, ctx: AdapterContext, provider = 'upstream'): ChatCompletion {
  if (!isRecord(body) || !Array.isArray(body.choices)) throw errors.upstreamProtocol(provider, 'no choices in the answer');
  return {
    ...(body as ChatCompletion),
    id: ctx.id,
    object: 'chat.completion',
    created: typeof body.created === 'number' ? body.created : ctx.created,
    model: ctx.model,
  };
}

/** OpenAI SSE: each `data:` is a chunk, `[DONE]` ends, `{"error":...}` is a mid-stream failure. */
export function createOpenAITranslator(ctx: AdapterContext, provider = 'upstream'): StreamTranslator {
  let done = false;
  return {
    get done() {
      return done;
    },
    push(ev: UpstreamEvent): ChatCompletionChunk[] {
      if (ev.data === '[DONE]') {
        done = true;
        return [];
      }
      const parsed = parseEventJson(ev, provider);
      if (!isRecord(parsed)) throw errors.upstreamProtocol(provider, 'a stream event was not an object');
      if (parsed.error !== undefined) throw errorFromBody(provider, 500, parsed);
      if (!Array.isArray(parsed.choices)) throw errors.upstreamProtocol(provider, 'a stream chunk had no choices');
      const chunk = parsed as ChatCompletionChunk;
      chunk.id = ctx.id;
      chunk.model = ctx.model;
      chunk.object = 'chat.completion.chunk';
      if (typeof chunk.created !== 'number') chunk.created = ctx.created;
      return [chunk];
    },
    finish: () => [],
  };
}
