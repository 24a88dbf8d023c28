import { setTimeout as sleep } from 'node:timers/promises';
import type { ChatCompletion, ChatCompletionChunk, ChatRequest, CompletionChoice, Usage } from '../../types/openai';
import type { AdapterContext, LocalProvider, UpstreamTarget } from '../types';
import { OPENAI_PARAMS } from '../openai';
import { mockAnswer } from './answer';
import { tokenLogprobs } from './structured';

interface MockOptions {
  /** Tokens per streamed chunk. */
  chunk_size: number;
  /** Pause before each streamed chunk, in ms. */
  chunk_delay_ms: number;
}

function options(target: UpstreamTarget): MockOptions {
  const o = { ...target.provider.options, ...target.deployment.options };
  const size = Number(o.chunk_size ?? 4);
  const delay = Number(o.chunk_delay_ms ?? 0);
  return { chunk_size: Number.isInteger(size) && size > 0 ? size : 4, chunk_delay_ms: Number.isFinite(delay) && delay >= 0 ? delay : 0 };
}

function choices(req: ChatRequest): number {
  return Number.isInteger(req.n) && (req.n as number) > 0 ? (req.n as number) : 1;
}

/** Logprobs of these tokens when the request asked for them (OpenAI's `{content, refusal}` shape), else null. */
function logprobsOf(req: ChatRequest, pieces: string[], offset = 0): { content: ReturnType<typeof tokenLogprobs>; refusal: null } | null {
  return req.logprobs === true ? { content: tokenLogprobs(pieces, req.top_logprobs ?? 0, offset), refusal: null } : null;
}

function scaled(u: Usage, n: number): Usage {
  const completion = u.completion_tokens * n;
  return { prompt_tokens: u.prompt_tokens, completion_tokens: completion, total_tokens: u.prompt_tokens + completion };
}

/** The built-in offline model: deterministic answers from the prompt, real token counts, configurable stream chunking. */
export const mockProvider: LocalProvider = {
  kind: 'local',
  type: 'mock',
  supportedParams: [...OPENAI_PARAMS, 'top_k', 'min_p', 'top_a', 'repetition_penalty'],

  async complete(req: ChatRequest, _target: UpstreamTarget, ctx: AdapterContext): Promise<ChatCompletion> {
    const a = mockAnswer(req, ctx.id);
    const n = choices(req);
    const list: CompletionChoice[] = [];
    for (let index = 0; index < n; index++) {
      list.push({
        index,
        message: a.toolCalls.length > 0 ? { role: 'assistant', content: null, tool_calls: a.toolCalls } : { role: 'assistant', content: a.text, refusal: null },
        finish_reason: a.finishReason,
        logprobs: a.toolCalls.length > 0 ? null : logprobsOf(req, a.pieces),
      });
    }
    return { id: ctx.id, object: 'chat.completion', created: ctx.created, model: ctx.model, choices: list, usage: scaled(a.usage, n), system_fingerprint: 'mock' };
  },

  async *stream(req: ChatRequest, target: UpstreamTarget, ctx: AdapterContext, signal: AbortSignal): AsyncIterable<ChatCompletionChunk> {
    const a = mockAnswer(req, ctx.id);
    const o = options(target);
    const n = choices(req);
    const chunk = (index: number, delta: ChatCompletionChunk['choices'][number]['delta'], finish: ChatCompletionChunk['choices'][number]['finish_reason'] = null, logprobs: unknown = null): ChatCompletionChunk => ({
      id: ctx.id, object: 'chat.completion.chunk', created: ctx.created, model: ctx.model, system_fingerprint: 'mock',
      choices: [{ index, delta, finish_reason: finish, logprobs }],
    });
    const pause = async () => {
      if (o.chunk_delay_ms > 0) await sleep(o.chunk_delay_ms, undefined, { signal });
      else if (signal.aborted) throw signal.reason;
    };
    for (let index = 0; index < n; index++) {
      yield chunk(index, { role: 'assistant', content: '' });
      if (a.toolCalls.length > 0) {
        for (let t = 0; t < a.toolCalls.length; t++) {
          const call = a.toolCalls[t];
          await pause();
          yield chunk(index, { tool_calls: [{ index: t, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] });
          const args = call.function.arguments;
          for (let i = 0; i < args.length; i += o.chunk_size * 4) {
            await pause();
            yield chunk(index, { tool_calls: [{ index: t, function: { arguments: args.slice(i, i + o.chunk_size * 4) } }] });
          }
        }
      } else {
        for (let i = 0; i < a.pieces.length; i += o.chunk_size) {
          await pause();
          const piece = a.pieces.slice(i, i + o.chunk_size);
          yield chunk(index, { content: piece.join('') }, null, logprobsOf(req, piece, i));
        }
      }
      yield chunk(index, {}, a.finishReason);
    }
    yield { id: ctx.id, object: 'chat.completion.chunk', created: ctx.created, model: ctx.model, system_fingerprint: 'mock', choices: [], usage: scaled(a.usage, n) };
  },
};
