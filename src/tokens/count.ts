import type { ChatMessage, ChatRequest } from '../types/openai';

/**
 * The gateway's own token counter, used where an upstream reports no usage and by the
 * built-in mock provider. It counts word pieces and punctuation marks, which tracks BPE
 * tokenizers closely for English text; a long word counts one token per 8 characters.
 */
const PIECE = /[\p{L}\p{M}]+|\p{N}+|[^\s\p{L}\p{M}\p{N}]/gu;

export function countTextTokens(text: string): number {
  let n = 0;
  for (const m of text.matchAll(PIECE)) n += Math.ceil(m[0].length / 8);
  return n;
}

/** Splits text into the pieces countTextTokens counts, keeping the whitespace before each. */
export function splitTokens(text: string): string[] {
  const out: string[] = [];
  const re = /\s*(?:[\p{L}\p{M}]{1,8}|\p{N}{1,8}|[^\s\p{L}\p{M}\p{N}])/gu;
  let last = 0;
  for (const m of text.matchAll(re)) {
    out.push(m[0]);
    last = (m.index ?? 0) + m[0].length;
  }
  if (last < text.length && out.length > 0) out[out.length - 1] += text.slice(last);
  return out;
}

/** Per-message framing overhead, as OpenAI's chat format counts it. */
const MESSAGE_OVERHEAD = 3;
const REPLY_PRIMING = 3;

export function messageText(m: ChatMessage): string {
  if (typeof m.content === 'string') return m.content;
  if (Array.isArray(m.content)) {
    return m.content.map((p) => (p.type === 'text' && typeof p.text === 'string' ? p.text : '')).join(' ');
  }
  return '';
}

/**
 * The prompt's size as `measure` counts each text (tokens, or characters for a bound), with the chat format's
 * framing: one walk for the count and its bound, so the bound can never miss what the count includes.
 */
function promptSize(req: ChatRequest, measure: (text: string) => number): number {
  let n = REPLY_PRIMING;
  for (const m of req.messages) {
    n += MESSAGE_OVERHEAD + measure(messageText(m));
    if (m.name) n += 1;
    if (m.tool_calls) for (const c of m.tool_calls) n += measure(c.function.name) + measure(c.function.arguments);
    if (m.function_call) n += measure(m.function_call.name) + measure(m.function_call.arguments);
  }
  if (req.tools) n += measure(JSON.stringify(req.tools));
  if (req.functions) n += measure(JSON.stringify(req.functions));
  return n;
}

export function countPromptTokens(req: ChatRequest): number {
  return promptSize(req, countTextTokens);
}

/**
 * A bound countPromptTokens never exceeds, without tokenizing: every token is at least one character. It answers
 * "does max_tokens fit the context window" for the usual request at the cost of reading string lengths.
 */
export function promptTokensAtMost(req: ChatRequest): number {
  return promptSize(req, (text) => text.length);
}
