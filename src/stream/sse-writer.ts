import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { toGatewayError, toSseErrorFrame, type GatewayError } from '../errors';
import type { ChatCompletionChunk, Usage } from '../types/openai';
import type { ChatStream, StreamEnd } from './chat-stream';
import { headList } from '../http/response-head';
import { chatFrameOf } from '../providers/same-wire';

export interface WriteStreamOptions {
  /** Whether the client asked for `stream_options.include_usage`. */
  includeUsage: boolean;
  /** Headers of the state (`responseHeaders`): they win over the stream's defaults. */
  headers: Record<string, string>;
  /** X-Request-Id, which wins over them. */
  requestId: string;
  logger: Logger;
  /** Aborted by the gateway itself (shutdown deadline): the stream ends with this error. */
  stop?: AbortSignal;
  /** Another wire format for the same chunks (the Responses event stream); default chat chunks and [DONE]. */
  framer?: StreamFramer;
}

/**
 * Frames a chat stream in another wire format: `end` runs after every observer's onEnd, `error` instead of the error
 * frame.
 */
export interface StreamFramer {
  start(): string;
  chunk(chunk: ChatCompletionChunk): string;
  end(end: StreamEnd): Promise<string>;
  error(e: GatewayError): Promise<string>;
}

const DONE = 'data: [DONE]\n\n';

const STREAM_HEADERS: Record<string, string> = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};

/**
 * The one loop that writes a chat stream to the client: frames exactly `data: <json>\n\n`,
 * each flushed as it comes, `usage: null` on every chunk but the usage chunk (sent only
 * when the client asked), `[DONE]` at the end, one error event if the upstream breaks.
 * A chunk read without a parse (chat passthrough) is written as its upstream frame when every observer is read-only
 * and the stream is chat chunks; otherwise it is parsed whole first, as every chunk was before.
 */
export function writeStream(res: ServerResponse, stream: ChatStream, opts: WriteStreamOptions): Promise<StreamEnd> {
  return new StreamWriter(res, stream, opts).run();
}

/** One stream being written: what the loop has seen so far, and the socket's corking. */
class StreamWriter {
  private corked = false;
  /** Frames of this turn, written as one at its end (one chunk of the response's chunked encoding, one syscall). */
  private pending = '';
  private flushScheduled = false;
  /** Chunks read without a parse go out as their upstream frames (decided once every observer is registered). */
  private passthrough = false;
  private cancelled = false;
  private error: GatewayError | null = null;
  private usage: Usage | null = null;
  private chunks = 0;
  private firstContentAt: bigint | null = null;
  private flushedFirst = false;
  private readonly finishReasons: Array<string | null> = [];
  private ended: StreamEnd | null = null;
  /** Write this turn's frames as one, and let them (with the head, the first time) leave in one syscall. */
  private readonly flush = () => {
    this.flushScheduled = false;
    if (this.pending.length > 0) {
      const frames = this.pending;
      this.pending = '';
      if (!this.res.writableEnded && !this.res.destroyed) this.res.write(frames);
    }
    if (this.corked) {
      this.corked = false;
      this.res.uncork();
    }
  };
  private readonly onClose = () => {
    if (!this.res.writableEnded) {
      this.cancelled = true;
      this.stream.abort(undefined);
    }
  };
  private readonly onStop = () => this.stream.abort(this.opts.stop?.reason as GatewayError | undefined);

  constructor(
    private readonly res: ServerResponse,
    private readonly stream: ChatStream,
    private readonly opts: WriteStreamOptions,
  ) {}

  async run(): Promise<StreamEnd> {
    const { res, opts, stream } = this;
    // The head in one call; the caller's headers win over the stream's defaults, its request id over both. Layers,
    // not a spread followed by a new property (an object of a map of its own, every request: see madeHold).
    res.writeHead(200, headList(STREAM_HEADERS, opts.headers, { 'X-Request-Id': opts.requestId }));
    this.cork();
    res.flushHeaders();
    if (opts.framer) res.write(opts.framer.start());
    res.on('close', this.onClose);
    opts.stop?.addEventListener('abort', this.onStop, { once: true });
    this.passthrough = !opts.framer && stream.readOnly();
    try {
      await this.loop();
      if (!this.cancelled) {
        // A finished stream is settled and stored before [DONE]: a client that sees [DONE]
        // can read its stored response and its charge at once.
        const end = await this.notifyEnd(this.finish());
        this.write(opts.framer ? await opts.framer.end(end) : DONE);
      }
    } catch (e) {
      if (!this.cancelled) await this.writeError(toGatewayError(e));
    } finally {
      this.flush();
      res.off('close', this.onClose);
      opts.stop?.removeEventListener('abort', this.onStop);
      if (!res.writableEnded) res.end();
      // Let the source clean up (timers, upstream socket) even when the loop left it early.
      stream.chunks.return?.(undefined)?.catch(() => undefined);
    }
    return this.ended ?? (await this.notifyEnd(this.finish()));
  }

  /**
   * Writes made in one turn of the loop leave as one write and one syscall: the headers with the first chunks, and
   * every chunk parsed from one upstream read together. Nothing waits longer, and the first chunk with content leaves
   * at once (time to first token), not at the end of the turn that may go on to translate the rest of the read.
   */
  private cork(): void {
    if (!this.corked) {
      this.corked = true;
      this.res.cork();
    }
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      process.nextTick(this.flush);
    }
  }

  /** Queue a frame for the end of this turn (see cork). */
  private write(frame: string): void {
    this.pending += frame;
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      process.nextTick(this.flush);
    }
  }

  /**
   * Chunks already at hand are taken with `poll`, one after another in this turn; `next` is awaited only when none is
   * (see ChunkSource).
   */
  private async loop(): Promise<void> {
    const source = this.stream.chunks;
    for (;;) {
      let chunk = source.poll?.();
      if (chunk === undefined) {
        const next = await source.next();
        if (next.done) return;
        chunk = next.value;
      }
      this.take(chunk);
      if (this.cancelled) return;
      if (this.res.writableNeedDrain) {
        this.flush();
        await drained(this.res);
      }
    }
  }

  /**
   * One chunk: noted, observed, written (unless withheld), and seen written. A run of chunks (ChatFrame.count) is
   * taken once when the stream passes through, else as its chunks, each whole.
   */
  private take(chunk: ChatCompletionChunk): void {
    const { stream, opts, passthrough } = this;
    const raw = chatFrameOf(chunk);
    if (raw && !passthrough) {
      if (raw.count === undefined || !raw.parts) chunk = raw.full();
      else {
        const parts = raw.parts();
        for (let i = 0; i < parts.length && !this.cancelled && !stream.aborted; i++) this.take(parts[i].full());
        return;
      }
    }
    for (let i = 0; i < stream.stamps.length; i++) chunk[stream.stamps[i][0]] = stream.stamps[i][1];
    const isUsageChunk = this.note(chunk);
    const first = this.firstContentAt !== null && !this.flushedFirst;
    const out = this.observe(chunk);
    if (this.cancelled) return;
    if (out === null || (isUsageChunk && !opts.includeUsage && !opts.framer)) return;
    const frame = opts.framer
      ? opts.framer.chunk(out)
      : raw && passthrough
        ? raw.frameWith(stream.stampJson)
        : `data: ${JSON.stringify(out)}\n\n`;
    if (!frame) return;
    this.chunks += raw && passthrough ? (raw.count ?? 1) : 1;
    this.write(frame);
    if (first) {
      this.flushedFirst = true;
      this.flush();
    }
    this.written(out);
  }

  /** What the end needs of a chunk (usage, first content, finish reasons); true for the usage chunk. */
  private note(chunk: ChatCompletionChunk): boolean {
    if (chunk.choices.length === 0 && chunk.usage != null) {
      this.usage = chunk.usage ?? null;
      return true;
    }
    chunk.usage = null;
    for (const c of chunk.choices) {
      if (this.firstContentAt === null && hasContent(c.delta)) this.firstContentAt = process.hrtime.bigint();
      if (c.finish_reason) this.finishReasons[c.index] = c.finish_reason;
    }
    return false;
  }

  /** Every observer's onChunk, in order: each may replace the chunk, or withhold it (null) from those after it. */
  private observe(chunk: ChatCompletionChunk): ChatCompletionChunk | null {
    const observers = this.stream.observers;
    let out: ChatCompletionChunk | null = chunk;
    for (let i = 0; i < observers.length && out !== null; i++) {
      try {
        const r: ChatCompletionChunk | null | void = observers[i].onChunk?.(out);
        if (r !== undefined) out = r;
      } catch (e) {
        this.opts.logger.error({ err: e, observer: observers[i].name }, 'stream observer failed');
      }
    }
    return out;
  }

  /** Every observer's onWritten, with exactly what the client got. */
  private written(out: ChatCompletionChunk): void {
    const observers = this.stream.observers;
    for (let i = 0; i < observers.length; i++) {
      try {
        observers[i].onWritten?.(out);
      } catch (e) {
        this.opts.logger.error({ err: e, observer: observers[i].name }, 'stream observer failed');
      }
    }
  }

  private async writeError(error: GatewayError): Promise<void> {
    this.error = error;
    const frame = this.opts.framer ? await this.opts.framer.error(error) : toSseErrorFrame(error);
    if (!this.res.writableEnded && !this.res.destroyed) this.write(frame);
    this.flush();
  }

  private finish(): StreamEnd {
    if (this.usage === null) this.usage = this.stream.usageSoFar();
    return {
      usage: this.usage,
      finishReasons: this.finishReasons,
      cancelled: this.cancelled,
      error: this.error,
      chunks: this.chunks,
      firstContentAt: this.firstContentAt,
      endedAt: process.hrtime.bigint(),
    };
  }

  /** Every observer's onEnd, once. */
  private async notifyEnd(end: StreamEnd): Promise<StreamEnd> {
    this.ended = end;
    for (const o of this.stream.observers) {
      try {
        await o.onEnd?.(end);
      } catch (e) {
        this.opts.logger.error({ err: e, observer: o.name }, 'stream observer failed at end');
      }
    }
    return end;
  }
}

export function hasContent(delta: ChatCompletionChunk['choices'][number]['delta']): boolean {
  return Boolean(
    delta.content ||
    delta.tool_calls?.length ||
    delta.function_call ||
    delta.refusal ||
    delta.reasoning ||
    delta.reasoning_details?.length,
  );
}

/** Resolves when the response can take more bytes again ('drain') or is gone ('close'). */
export function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
