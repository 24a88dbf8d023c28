import type { ChatCompletion, ChatRequest, CompletionChoice, Usage } from '../../types/openai';
import type { AdapterContext } from '../types';
import { mockAnswer } from './answer';
import { tokenLogprobs } from './structured';

export const FINGERPRINT = 'mock';

/** How many choices the request asks for (n, default 1). */
export function choices(req: ChatRequest): number {
  return Number.isInteger(req.n) && (req.n as number) > 0 ? (req.n as number) : 1;
}

/** Logprobs of these tokens when the request asked for them (OpenAI's `{content, refusal}` shape), else null. */
export function logprobsOf(
  req: ChatRequest,
  pieces: string[],
  offset = 0,
): { content: ReturnType<typeof tokenLogprobs>; refusal: null } | null {
  return req.logprobs === true
    ? { content: tokenLogprobs(pieces, req.top_logprobs ?? 0, offset), refusal: null }
    : null;
}

/** Usage of `n` choices: the prompt once, the completion n times. */
export function scaled(u: Usage, n: number): Usage {
  const completion = u.completion_tokens * n;
  return { prompt_tokens: u.prompt_tokens, completion_tokens: completion, total_tokens: u.prompt_tokens + completion };
}

/** The mock's answer as one completion with n identical choices. */
export function mockCompletion(req: ChatRequest, ctx: AdapterContext): ChatCompletion {
  const a = mockAnswer(req, ctx.id);
  const n = choices(req);
  const calls = a.toolCalls.length > 0;
  const list: CompletionChoice[] = [];
  for (let index = 0; index < n; index++) {
    list.push({
      index,
      message: calls
        ? { role: 'assistant', content: null, tool_calls: a.toolCalls }
        : { role: 'assistant', content: a.text, refusal: null },
      finish_reason: a.finishReason,
      logprobs: calls ? null : logprobsOf(req, a.pieces),
    });
  }
  const { id, created, model } = ctx;
  return {
    id,
    object: 'chat.completion',
    created,
    model,
    choices: list,
    usage: scaled(a.usage, n),
    system_fingerprint: FINGERPRINT,
  };
}
