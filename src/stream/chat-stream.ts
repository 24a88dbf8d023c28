import type { GatewayError } from '../errors';
import type { ChatCompletionChunk, Usage } from '../types/openai';
import { STAMPABLE_FIELDS } from '../providers/same-wire';

/** How a stream ended, as every observer sees it once. */
export interface StreamEnd {
  /** The whole request's usage (from the upstream, or counted by the gateway). */
  usage: Usage | null;
  /** Finish reason per choice index. */
  finishReasons: Array<string | null>;
  /** The client went away before the end. */
  cancelled: boolean;
  /** The upstream broke (or the gateway ended the stream) with this error. */
  error: GatewayError | null;
  /** Chunks written to the client. */
  chunks: number;
  /** hrtime (ns) of the first chunk with content, if any. */
  firstContentAt: bigint | null;
  endedAt: bigint;
}

/**
 * Plugins that must see a stream register observers instead of wrapping it; the one writer
 * loop calls them. The contract (plugins/README.md, "Stream observers"):
 * - Order: observers run in the order they were registered. A plugin registers after its
 *   `await next()`, so the plugin nearest routing registers first: chunks travel outward
 *   through the chain exactly as a plain answer does.
 * - `onChunk` runs before the chunk is written. It may change the chunk in place, return
 *   another chunk to write instead, or return `null` to withhold it: the client never gets
 *   it and observers after this one never see it (a guard can redact without leaking).
 * - `onWritten` runs after the chunk went to the client, with exactly what the client got
 *   (storage records from it). The usage chunk reaches it only when the client asked for usage.
 * - `onEnd` runs once, awaited in order, before `[DONE]` (so a client that sees `[DONE]` can
 *   read its stored response and charge) or after the error event / the client leaving.
 * - `stream.abort(err)` stops the upstream; the stream ends with `err` as its one error
 *   event (or silently for `undefined`, used when the client is gone).
 * Observers must not throw; if one does, the writer logs it with the observer's name and goes on.
 *
 * - `readOnly: true` promises that `onChunk` never replaces or withholds a chunk and changes nothing in one but the
 *   usage chunk's `usage` (credit shows the charge there; the gateway always writes that chunk itself), and that
 *   `onChunk`/`onWritten` read only the fields the gateway reads of a chunk: `id`, `object`, `created`, `model`,
 *   `usage`, and of each choice `index`, `finish_reason` and the delta's `role`, `content`, `refusal`, `reasoning`,
 *   `tool_calls`, `function_call`. When every observer that has `onChunk` or `onWritten` says so, a chat stream from
 *   an upstream of the same wire passes through: the upstream's bytes are forwarded and the observers get those fields
 *   read without a parse (docs/decisions/0035-chat-stream-passthrough.md). An observer that does not say so may
 *   rewrite (the safe default): the stream is then parsed and serialised by the gateway, as every stream was before.
 */
export interface StreamObserver {
  name: string;
  readOnly?: boolean;
  onChunk?(chunk: ChatCompletionChunk): ChatCompletionChunk | null | void;
  onWritten?(chunk: ChatCompletionChunk): void;
  onEnd?(end: StreamEnd): void | Promise<void>;
}

/**
 * A stream's chunks: an async iterator that may also hand over, without a promise each, the chunks it already holds
 * (read and translated from one upstream read). The writer takes chunks with `poll` while it gets them and awaits
 * `next` only when it gets none, so the chunks of one read cost no promise and no result object each.
 */
export interface ChunkSource extends AsyncIterator<ChatCompletionChunk> {
  /**
   * The next chunk if it is already at hand, else undefined: then `next()` says what comes (a chunk later, the end,
   * a failure). Never throws; a source that is stopping returns undefined and lets `next()` throw.
   */
  poll?(): ChatCompletionChunk | undefined;
}

/** A stream of OpenAI chunks from the routing plugin, on its way to the client. */
export class ChatStream {
  readonly observers: StreamObserver[] = [];
  /** Top-level fields set on every chunk the client gets (stamp). */
  readonly stamps: Array<[string, string]> = [];
  /** The same as JSON members (`,"name":"value"`), added at the end of a passed-through frame. */
  stampJson = '';
  /** abort was called: the writer takes no more of a run's chunks (ChatFrame.count) once it was. */
  aborted = false;
  /** Stops the upstream request (client gone, shutdown, an observer's block). */
  readonly abort = (reason: GatewayError | undefined): void => {
    this.aborted = true;
    this.stop(reason);
  };

  constructor(
    /** Chunks in order; the usage chunk (choices: []) comes last when the upstream or the gateway produced one. */
    readonly chunks: ChunkSource,
    private readonly stop: (reason: GatewayError | undefined) => void,
    /**
     * Usage counted by the gateway from what was produced so far: used when the stream ends without an upstream usage
     * chunk (cut, broken).
     */
    readonly usageSoFar: () => Usage,
  ) {}

  observe(o: StreamObserver): void {
    this.observers.push(o);
  }

  /**
   * Set the top-level `field` to `value` on every chunk the client gets (routing's served provider, OpenRouter's
   * `provider`). Unlike an observer that rewrites each chunk, it leaves a stream free to pass through: a passed-through
   * frame gets the field at its end (a chunk whose upstream JSON has it is parsed whole instead). Only the fields in
   * STAMPABLE_FIELDS (src/providers/same-wire.ts).
   */
  stamp(field: string, value: string): void {
    if (!STAMPABLE_FIELDS.includes(field)) throw new Error(`'${field}' cannot be stamped on stream chunks`);
    this.stamps.push([field, value]);
    this.stampJson += `,${JSON.stringify(field)}:${JSON.stringify(value)}`;
  }

  /** Whether no observer may rewrite, withhold or need more of a chunk than the gateway reads (see readOnly). */
  readOnly(): boolean {
    for (const o of this.observers) if (!o.readOnly && (o.onChunk || o.onWritten)) return false;
    return true;
  }
}
