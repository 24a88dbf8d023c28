import { isGatewayError } from '../../src/errors';
import { ChatStream } from '../../src/stream/chat-stream';
import { hasContent } from '../../src/stream/sse-writer';
import { countTextTokens } from '../../src/tokens/count';
import type { ChatCompletionChunk, Usage } from '../../src/types/openai';
import type { AttemptAbort } from './attempt-signal';

/**
 * Pull an upstream stream until its first chunk with content, holding role-only chunks,
 * so that a failure before any content can still move to the next attempt. Throws what
 * the upstream threw before content; afterwards the returned ChatStream yields the held
 * chunks, then the rest. It counts what was produced, for usage when none comes.
 */
export async function openStream(
  source: AsyncGenerator<ChatCompletionChunk>,
  sig: AttemptAbort,
  /** Counted only when the upstream reports no usage. */
  promptTokens: () => number,
): Promise<ChatStream> {
  const held: ChatCompletionChunk[] = [];
  let completionText = '';
  let toolText = '';
  const see = (c: ChatCompletionChunk) => {
    for (const ch of c.choices) {
      if (ch.delta.content) completionText += ch.delta.content;
      if (ch.delta.tool_calls)
        for (const t of ch.delta.tool_calls) toolText += (t.function?.name ?? '') + ' ' + (t.function?.arguments ?? '');
    }
  };
  try {
    for (;;) {
      const r = await source.next();
      if (r.done) break;
      held.push(r.value);
      see(r.value);
      if (r.value.choices.some((c) => hasContent(c.delta) || c.finish_reason) || r.value.usage) break;
    }
  } catch (e) {
    sig.dispose();
    throw e;
  }

  async function* rest(): AsyncGenerator<ChatCompletionChunk> {
    try {
      yield* held;
      held.length = 0;
      for (;;) {
        let r: IteratorResult<ChatCompletionChunk>;
        try {
          r = await source.next();
        } catch (e) {
          // An abort surfaces as the source's own error (AbortError...): report why we aborted.
          throw sig.aborted && isGatewayError(sig.reason) ? sig.reason : e;
        }
        if (r.done) return;
        see(r.value);
        yield r.value;
      }
    } finally {
      sig.dispose();
      await source.return(undefined).catch(() => undefined);
    }
  }

  const usageSoFar = (): Usage => {
    const completion = countTextTokens(completionText) + countTextTokens(toolText);
    const prompt = promptTokens();
    return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  };
  return new ChatStream(rest(), (reason) => sig.abort(reason), usageSoFar);
}
