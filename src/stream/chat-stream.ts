import type { GatewayError } from '../errors';
import type { ChatCompletionChunk, Usage } from '../types/openai';

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
 * Plugins that must see a stream register observers instead of wrapping it: the one
 * writer loop calls onChunk (before the chunk is written, so an observer may add to it,
 * e.g. usage.cost) and onEnd exactly once. Observers must not throw; if one does, the
 * writer logs it and goes on.
 */
export interface StreamObserver {
  name: string;
  onChunk?(chunk: ChatCompletionChunk): void;
  onEnd?(end: StreamEnd): void | Promise<void>;
}

/** A stream of OpenAI chunks from the routing plugin, on its way to the client. */
export class ChatStream {
  readonly observers: StreamObserver[] = [];

  constructor(
    /** Chunks in order; the usage chunk (choices: []) comes last when the upstream or the gateway produced one. */
    readonly chunks: AsyncIterator<ChatCompletionChunk>,
    /** Stops the upstream request (client gone, shutdown). */
    readonly abort: (reason: GatewayError | undefined) => void,
    /** Usage counted by the gateway from what was produced so far: used when the stream ends without an upstream usage chunk (cut, broken). */
    readonly usageSoFar: () => Usage,
  ) {}

  observe(o: StreamObserver): void {
    this.observers.push(o);
  }
}
