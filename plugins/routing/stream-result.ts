import {
  ChatStream,
  countTextTokens,
  hasContent,
  isGatewayError,
  type GatewayError,
  type ChatCompletionChunk,
  type ChunkSource,
  type Usage,
} from '../../src/plugin';
import type { AttemptAbort } from './attempt-signal';

/**
 * Pull an upstream stream until its first chunk with content, holding role-only chunks,
 * so that a failure before any content can still move to the next attempt. Throws what
 * the upstream threw before content; afterwards the returned ChatStream yields the held
 * chunks, then the rest. It counts what was produced, for usage when none comes.
 */
export async function openStream(
  opened: Promise<ChunkSource>,
  sig: AttemptAbort,
  /** Counted only when the upstream reports no usage. */
  promptTokens: () => number,
): Promise<ChatStream> {
  const seen = new Produced();
  const held: ChatCompletionChunk[] = [];
  let source: ChunkSource;
  try {
    source = await opened;
    for (;;) {
      const r = await source.next();
      if (r.done) break;
      held.push(r.value);
      seen.see(r.value);
      if (r.value.choices.some((c) => hasContent(c.delta) || c.finish_reason) || r.value.usage) break;
    }
  } catch (e) {
    sig.dispose();
    throw e;
  }
  const usageSoFar = (): Usage => {
    // What the upstream reported before the end (Anthropic's message_start: input and cache counts), if anything.
    const reported = (source as { usageSoFar?: () => Usage | undefined }).usageSoFar?.();
    if (reported) return reported;
    const reasoning = countTextTokens(seen.reasoningText);
    const completion = countTextTokens(seen.completionText) + countTextTokens(seen.toolText) + reasoning;
    const prompt = promptTokens();
    const u: Usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
    if (reasoning > 0) u.completion_tokens_details = { reasoning_tokens: reasoning };
    return u;
  };
  const rest = new Rest(held, source, seen, sig);
  return new ChatStream(
    rest,
    (reason) => {
      rest.stop(reason);
      sig.abort(reason);
    },
    usageSoFar,
  );
}

/** What a stream produced: its content, reasoning and tool-call text, counted for usage when none is reported. */
class Produced {
  completionText = '';
  reasoningText = '';
  toolText = '';

  see(c: ChatCompletionChunk): void {
    for (const ch of c.choices) {
      if (ch.delta.content) this.completionText += ch.delta.content;
      if (typeof ch.delta.reasoning === 'string') this.reasoningText += ch.delta.reasoning;
      if (ch.delta.tool_calls)
        for (const t of ch.delta.tool_calls)
          this.toolText += (t.function?.name ?? '') + ' ' + (t.function?.arguments ?? '');
    }
  }
}

/**
 * The held chunks, then the source's, each seen on its way; the attempt's abort is disposed of and the source
 * returned once it ends, fails or the reader leaves. No generator frames; the chunks the source already holds are
 * handed over without a promise each (poll).
 */
class Rest implements ChunkSource {
  private done = false;
  private readonly onResult = (r: IteratorResult<ChatCompletionChunk>): IteratorResult<ChatCompletionChunk> => {
    if (r.done) this.close();
    else this.seen.see(r.value);
    return r;
  };
  private readonly onError = (e: unknown): never => {
    // An abort surfaces as the source's own error (AbortError...): report why we aborted.
    const reason = this.sig.aborted && isGatewayError(this.sig.reason) ? this.sig.reason : e;
    this.close();
    throw reason;
  };

  constructor(
    private readonly held: ChatCompletionChunk[],
    private readonly source: ChunkSource,
    private readonly seen: Produced,
    private readonly sig: AttemptAbort,
  ) {}

  /** Why stream.abort was called with a reason (an observer's block, shutdown), if it was. */
  private stopped: GatewayError | undefined;

  stop(reason: unknown): void {
    if (isGatewayError(reason)) this.stopped ??= reason;
  }

  next(): Promise<IteratorResult<ChatCompletionChunk>> {
    // stream.abort(err) ends the stream with err at once, even when chunks are still held or already parsed from the
    // upstream's last read (they would otherwise be written, then [DONE]).
    if (this.stopped && !this.done) {
      this.close();
      return Promise.reject(this.stopped);
    }
    if (this.held.length > 0) return Promise.resolve({ done: false, value: this.held.shift()! });
    if (this.done) return Promise.resolve({ done: true, value: undefined });
    return this.source.next().then(this.onResult, this.onError);
  }

  /** A held chunk, or one the source already has; undefined once stopped (next() then throws why) or ended. */
  poll(): ChatCompletionChunk | undefined {
    if (this.stopped) return undefined;
    if (this.held.length > 0) return this.held.shift();
    if (this.done) return undefined;
    const chunk = this.source.poll?.();
    if (chunk !== undefined) this.seen.see(chunk);
    return chunk;
  }

  return(): Promise<IteratorResult<ChatCompletionChunk>> {
    this.held.length = 0;
    this.close();
    return Promise.resolve({ done: true, value: undefined });
  }

  private close(): void {
    if (this.done) return;
    this.done = true;
    this.sig.dispose();
    this.source.return?.(undefined)?.catch(() => undefined);
  }
}
