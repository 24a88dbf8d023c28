import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChunkChoice,
  ContentPart,
  FinishReason,
  ReasoningDetail,
  ToolCall,
  Usage,
} from '../../types/openai';
import { errors } from '../../errors';
import type { AdapterContext, UpstreamEvent } from '../types';

/** Helpers every non-OpenAI adapter needs: chunk building, content parts, tool-call bookkeeping. */

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function chunk(
  ctx: AdapterContext,
  delta: ChunkChoice['delta'],
  finish: FinishReason | null = null,
  index = 0,
): ChatCompletionChunk {
  return {
    id: ctx.id,
    object: 'chat.completion.chunk',
    created: ctx.created,
    model: ctx.model,
    choices: [{ index, delta, finish_reason: finish }],
  };
}

export function usageChunk(ctx: AdapterContext, usage: Usage): ChatCompletionChunk {
  return { id: ctx.id, object: 'chat.completion.chunk', created: ctx.created, model: ctx.model, choices: [], usage };
}

/** OpenAI usage; `prompt` counts every input token (cache reads and writes included). */
export function usage(
  prompt: number,
  completion: number,
  cached?: number,
  reasoning?: number,
  cacheWrite?: number,
): Usage {
  const u: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  if (cached || cacheWrite)
    u.prompt_tokens_details = { cached_tokens: cached ?? 0, ...(cacheWrite ? { cache_write_tokens: cacheWrite } : {}) };
  if (reasoning) u.completion_tokens_details = { reasoning_tokens: reasoning };
  return u;
}

/** A message's reasoning as the gateway returns it: `reasoning` text and the `reasoning_details` a next turn needs. */
export interface Reasoning {
  text: string;
  details: ReasoningDetail[];
}

export function completion(
  ctx: AdapterContext,
  text: string | null,
  toolCalls: ToolCall[],
  finish: FinishReason | null,
  u: Usage | undefined,
  r?: Reasoning,
): ChatCompletion {
  const reasoning =
    r && !ctx.excludeReasoning && (r.text || r.details.length)
      ? { reasoning: r.text || null, ...(r.details.length ? { reasoning_details: r.details } : {}) }
      : {};
  return {
    id: ctx.id,
    object: 'chat.completion',
    created: ctx.created,
    model: ctx.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: text,
          ...reasoning,
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
        },
        finish_reason: finish,
        logprobs: null,
      },
    ],
    ...(u ? { usage: u } : {}),
  };
}

/** A streamed piece of reasoning (text and/or details), or nothing when the client excluded it. */
export function reasoningChunk(
  ctx: AdapterContext,
  text: string,
  details: ReasoningDetail[] = [],
  index = 0,
): ChatCompletionChunk[] {
  if (ctx.excludeReasoning || (!text && details.length === 0)) return [];
  return [
    chunk(
      ctx,
      { ...(text ? { reasoning: text } : {}), ...(details.length ? { reasoning_details: details } : {}) },
      null,
      index,
    ),
  ];
}

/** The text of a message's content (string, or the text parts of a list). */
export function textOf(content: string | ContentPart[] | null): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (p.type === 'text' && typeof p.text === 'string' ? p.text : '')).join('');
}

/** A data: URL's media type and base64 payload, or null for any other URL. */
export function dataUrl(url: string): { mediaType: string; data: string } | null {
  const m = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return m ? { mediaType: m[1], data: m[2] } : null;
}

export function parseArgs(args: string): unknown {
  try {
    return args ? JSON.parse(args) : {};
  } catch {
    return {};
  }
}

/** Merge consecutive messages of the same role (providers that require alternation). */
export function mergeConsecutive<T extends { role: string; content: unknown[] }>(msgs: T[]): T[] {
  const out: T[] = [];
  for (const m of msgs) {
    const last = out[out.length - 1];
    if (last && last.role === m.role) last.content.push(...m.content);
    else out.push({ ...m, content: [...m.content] });
  }
  return out;
}

/** Tool-call index bookkeeping for stream translators: provider block ids -> stable OpenAI indexes. */
export class ToolIndexes {
  private readonly map = new Map<string | number, number>();
  get count(): number {
    return this.map.size;
  }
  open(key: string | number): number {
    const i = this.map.size;
    this.map.set(key, i);
    return i;
  }
  get(key: string | number): number | undefined {
    return this.map.get(key);
  }
}

/** A stream event's JSON payload; anything else is the upstream breaking the protocol. */
export function parseEventJson(ev: UpstreamEvent, provider: string, what = 'a stream event'): unknown {
  try {
    return JSON.parse(ev.data);
  } catch {
    throw errors.upstreamProtocol(provider, `${what} was not JSON`);
  }
}
