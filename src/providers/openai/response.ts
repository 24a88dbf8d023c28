import { errors } from '../../errors';
import type { ChatCompletion, ChatMessage, ChunkChoice } from '../../types/openai';
import type { AdapterContext } from '../types';
import { isRecord } from '../shared';

type Finish = ChatCompletion['choices'][number]['finish_reason'];

/** Finish reasons some OpenAI-compatible servers use under other names (Mistral's model_length). */
const FINISH_ALIASES: Record<string, string> = { model_length: 'length' };

/** Text of Mistral-style content chunks: `{type: text, text}` and `{type: thinking, thinking: [chunks]}`. */
function chunkText(parts: unknown[], type: 'text' | 'thinking'): string {
  return parts
    .filter(isRecord)
    .map((p) => {
      if (p.type !== type) return '';
      if (type === 'text') return String(p.text ?? '');
      return Array.isArray(p.thinking) ? chunkText(p.thinking, 'text') : String(p.thinking ?? '');
    })
    .join('');
}

/**
 * DeepSeek / vLLM call it reasoning_content, Mistral's reasoning models answer content
 * chunks with `thinking` parts: the gateway answers a string content and OpenRouter's `reasoning`.
 */
export function normaliseReasoning(m: ChatMessage | ChunkChoice['delta'], exclude: boolean | undefined): void {
  if (typeof m.reasoning_content === 'string' && m.reasoning === undefined) m.reasoning = m.reasoning_content;
  delete m.reasoning_content;
  if (Array.isArray(m.content) && m.content.some((p) => isRecord(p) && p.type === 'thinking')) {
    const thinking = chunkText(m.content, 'thinking');
    m.content = chunkText(m.content, 'text');
    if (thinking) m.reasoning = `${typeof m.reasoning === 'string' ? m.reasoning : ''}${thinking}`;
  }
  if (exclude) {
    delete m.reasoning;
    delete m.reasoning_details;
  }
}

/** A finish reason under OpenAI's name; `error` is the generation failing upstream. */
export function finishOf(provider: string, f: unknown, message: string): Finish {
  if (f === 'error')
    throw errors.upstreamStreamError(provider, message || 'the generation failed (finish_reason error)');
  return (typeof f === 'string' ? (FINISH_ALIASES[f] ?? f) : f) as Finish;
}

/** An OpenAI-shaped answer, with the gateway's id and the client's model name. */
export function parseOpenAIResponse(body: unknown, ctx: AdapterContext, provider = 'upstream'): ChatCompletion {
  const name = ctx.provider ?? provider;
  if (!isRecord(body) || !Array.isArray(body.choices)) throw errors.upstreamProtocol(name, 'no choices in the answer');
  for (const c of body.choices as ChatCompletion['choices']) {
    if (!isRecord(c)) continue;
    c.finish_reason = finishOf(name, c.finish_reason, '');
    if (isRecord(c.message)) normaliseReasoning(c.message, ctx.excludeReasoning);
  }
  // In place (the body is this answer's own parse), not `{ ...body, id, ... }`: V8 gives an object made by a spread a
  // map of its own once routing stamps `provider` on it, a new map an answer, so the stamp went through the runtime and
  // JSON.stringify of the answer took its slow path. Fields keep their places as the spread kept them.
  const answer = body as unknown as ChatCompletion;
  answer.id = ctx.id;
  answer.object = 'chat.completion';
  answer.created = typeof body.created === 'number' ? body.created : ctx.created;
  answer.model = ctx.model;
  return answer;
}
