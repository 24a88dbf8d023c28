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

export function countMessageTokens(messages: readonly ChatMessage[]): number {
  let n = REPLY_PRIMING;
  for (const m of messages) {
    n += MESSAGE_OVERHEAD + countTextTokens(messageText(m));
    if (m.name) n += 1;
    if (m.tool_calls)
      for (const c of m.tool_calls) n += countTextTokens(c.function.name) + countTextTokens(c.function.arguments);
    if (m.function_call) n += countTextTokens(m.function_call.name) + countTextTokens(m.function_call.arguments);
  }
  return n;
}

export function countPromptTokens(req: ChatRequest): number {
  let n = countMessageTokens(req.messages);
  if (req.tools) n += countTextTokens(JSON.stringify(req.tools));
  if (req.functions) n += countTextTokens(JSON.stringify(req.functions));
  return n;
}

/** Characters of `text` and its framing: countTextTokens never counts more tokens than characters. */
function charsOf(...texts: Array<string | undefined>): number {
  let n = 0;
  for (const t of texts) n += t?.length ?? 0;
  return n;
}

/**
 * A bound countPromptTokens never exceeds, without tokenizing: every token is at least one character. It answers
 * "does max_tokens fit the context window" for the usual request at the cost of reading string lengths.
 */
export function promptTokensAtMost(req: ChatRequest): number {
  let n = REPLY_PRIMING;
  for (const m of req.messages) {
    n += MESSAGE_OVERHEAD + messageText(m).length + (m.name ? 1 : 0);
    for (const c of m.tool_calls ?? []) n += charsOf(c.function.name, c.function.arguments);
    if (m.function_call) n += charsOf(m.function_call.name, m.function_call.arguments);
  }
  if (req.tools) n += JSON.stringify(req.tools).length;
  if (req.functions) n += JSON.stringify(req.functions).length;
  return n;
}
