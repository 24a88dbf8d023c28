import { setTimeout as sleep } from 'node:timers/promises';
import type { ChatCompletionChunk, ChatRequest } from '../../types/openai';
import { targetOptions } from '../shared/http';
import type { AdapterContext, UpstreamTarget } from '../types';
import { mockAnswer } from './answer';
import { choices, FINGERPRINT, logprobsOf, scaled } from './response';

type Choice = ChatCompletionChunk['choices'][number];

interface MockOptions {
  /** Tokens per streamed chunk. */
  chunk_size: number;
  /** Pause before each streamed chunk, in ms. */
  chunk_delay_ms: number;
}

function options(target: UpstreamTarget): MockOptions {
  const o = targetOptions(target);
  const size = Number(o.chunk_size ?? 4);
  const delay = Number(o.chunk_delay_ms ?? 0);
  return {
    chunk_size: Number.isInteger(size) && size > 0 ? size : 4,
    chunk_delay_ms: Number.isFinite(delay) && delay >= 0 ? delay : 0,
  };
}

/** The mock's answer streamed: each choice in turn, in chunks of chunk_size tokens, usage last. */
export async function* mockStream(
  req: ChatRequest,
  target: UpstreamTarget,
  ctx: AdapterContext,
  signal: AbortSignal,
): AsyncIterable<ChatCompletionChunk> {
  const a = mockAnswer(req, ctx.id);
  const o = options(target);
  const n = choices(req);
  const head = { id: ctx.id, object: 'chat.completion.chunk' as const, created: ctx.created, model: ctx.model };
  const chunk = (
    index: number,
    delta: Choice['delta'],
    finish: Choice['finish_reason'] = null,
    logprobs: unknown = null,
  ) => ({
    ...head,
    system_fingerprint: FINGERPRINT,
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
        yield chunk(index, {
          tool_calls: [
            { index: t, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } },
          ],
        });
        const args = call.function.arguments;
        for (let i = 0; i < args.length; i += o.chunk_size * 4) {
          await pause();
          yield chunk(index, {
            tool_calls: [{ index: t, function: { arguments: args.slice(i, i + o.chunk_size * 4) } }],
          });
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
  yield { ...head, system_fingerprint: FINGERPRINT, choices: [], usage: scaled(a.usage, n) };
}
