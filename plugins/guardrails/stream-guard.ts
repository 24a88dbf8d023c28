/**
 * @module
 * A stream's answer through the guard, chunk by chunk, as a stream observer that may rewrite (decision 0019): each
 * choice's text (and each tool call's arguments) goes through a rolling window; what can no longer become a
 * placeholder or a match goes on checked and restored, the rest waits for the next chunk (hold.ts) and goes with the
 * choice's finish. A block ends the stream with its error event. The client never gets a held or blocked byte early.
 */
import { toGatewayError, type ChatCompletionChunk, type GatewayError, type StreamObserver } from '../../src/plugin';
import { holdFrom, type HoldRule } from './hold';
import type { GuardRun } from './run';

type ChunkChoice = ChatCompletionChunk['choices'][number];
type Delta = ChunkChoice['delta'];

export class StreamGuard {
  /** Text waiting per window: `c<choice>` for content, `t<choice>.<tool>` for a tool call's arguments. */
  private readonly pending = new Map<string, string>();

  constructor(
    private readonly run: GuardRun,
    private readonly rule: HoldRule,
  ) {}

  /** What of `text` (after what was held) can go now, checked and restored. */
  push(key: string, text: string): string {
    const buf = (this.pending.get(key) ?? '') + text;
    const cut = holdFrom(buf, this.rule);
    if (cut < buf.length) this.pending.set(key, buf.slice(cut));
    else this.pending.delete(key);
    return cut === 0 ? '' : this.run.answer(buf.slice(0, cut));
  }

  /** Everything still held for a window, checked and restored (the choice finished). */
  flush(key: string): string {
    const rest = this.pending.get(key);
    this.pending.delete(key);
    return rest === undefined ? '' : this.run.answer(rest);
  }

  private choice(c: ChunkChoice): void {
    const d: Delta = c.delta;
    if (typeof d.content === 'string' && d.content.length > 0) d.content = this.push(`c${c.index}`, d.content);
    for (const t of d.tool_calls ?? [])
      if (t.function?.arguments) t.function.arguments = this.push(`t${c.index}.${t.index}`, t.function.arguments);
    if (c.finish_reason) this.finish(c, d);
  }

  private finish(c: ChunkChoice, d: Delta): void {
    const rest = this.flush(`c${c.index}`);
    if (rest) d.content = (d.content ?? '') + rest;
    const prefix = `t${c.index}.`;
    for (const key of [...this.pending.keys()]) {
      if (!key.startsWith(prefix)) continue;
      const args = this.flush(key);
      if (args) (d.tool_calls ??= []).push({ index: Number(key.slice(prefix.length)), function: { arguments: args } });
    }
  }

  /** The chunk to write, or null when all it carried was text now held (a frame of nothing is not sent). */
  onChunk(chunk: ChatCompletionChunk): ChatCompletionChunk | null {
    let carried = false;
    for (const c of chunk.choices) {
      const had = typeof c.delta.content === 'string' && c.delta.content.length > 0;
      this.choice(c);
      const d = c.delta;
      const emptied = had && !d.content && !d.role && !c.finish_reason && !d.tool_calls?.length && !d.refusal;
      carried ||= !emptied;
    }
    return chunk.choices.length === 0 || carried ? chunk : null;
  }
}

/** The observer: a block (or a failing check) aborts the stream with its error, and the chunk is withheld. */
export function streamObserver(guard: StreamGuard, abort: (e: GatewayError) => void): StreamObserver {
  let blocked = false;
  return {
    name: 'guardrails',
    onChunk(chunk) {
      // After a block nothing more is written, whatever the upstream had already sent.
      if (blocked) return null;
      try {
        return guard.onChunk(chunk);
      } catch (e) {
        blocked = true;
        abort(toGatewayError(e));
        return null;
      }
    },
  };
}
