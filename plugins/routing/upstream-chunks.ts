import type { Readable } from 'node:stream';
import {
  chunkCount,
  withFrame,
  withNativeError,
  type ChatCompletionChunk,
  type ChunkSource,
  type EventParser,
  type GatewayError,
  type StreamTranslator,
  type UpstreamEvent,
  type Usage,
} from '../../src/plugin';

/** Chunks parsed ahead of the reader before the upstream body is paused (a slow client holds the upstream back). */
const HIGH_WATER = 64;

type Waiter = { resolve: (r: IteratorResult<ChatCompletionChunk>) => void; reject: (e: unknown) => void };

const DONE: IteratorResult<ChatCompletionChunk> = { done: true, value: undefined };

/**
 * An upstream stream's body as OpenAI chunks, pushed as its bytes arrive: the bytes of one socket read are parsed and
 * translated together once the read is done (a microtask after its first 'data' event: undici emits one per chunk of
 * the chunked encoding, and a provider writes one per event) and their chunks queued for the reader, who takes them
 * with `next()` (at once when queued). Pushed, not pulled through async generators
 * (docs/decisions/0032-plugin-hot-path-shapes.md).
 *
 * Each socket read is parsed in its own turn, so a fast upstream leaves other requests their turns. Once HIGH_WATER
 * chunks wait and the reader has not taken them by the next turn of the event loop (a client that does not read),
 * the body is paused until the reader has taken them all. Not at once: the chunks of one socket read come as many
 * 'data' events before the reader's turn, and pausing among them split what the writer sends in one write into a
 * write per HIGH_WATER chunks (3x the writes of a byte pipe). A failure (the body's error, a line too long, the
 * upstream's error event, a stream that ends unfinished) comes after the chunks parsed before it, mapped by `fail`.
 * `return()` destroys the body.
 */
export class UpstreamChunks implements ChunkSource {
  private queue: ChatCompletionChunk[] = [];
  private head = 0;
  /** The stream's chunks waiting in the queue, those of a run (ChatFrame.count) counted one by one. */
  private queued = 0;
  protected readonly events: UpstreamEvent[] = [];
  /** The body's bytes not parsed yet: those of the socket read under way. */
  private reads: Uint8Array[] = [];
  private readonly parseReads = () => this.parse();
  private waiter: Waiter | null = null;
  /** Set once nothing more will be queued: DONE, or the failure to throw after the queue. */
  private ended = false;
  private failure: GatewayError | null = null;
  private paused = false;
  private pauseCheck = false;
  /** A turn after the queue passed HIGH_WATER: pause if the reader has not taken it. */
  private readonly checkPause = () => {
    this.pauseCheck = false;
    if (!this.ended && !this.paused && this.queued >= HIGH_WATER) {
      this.paused = true;
      this.body.pause();
    }
  };

  constructor(
    private readonly body: Readable,
    private readonly parser: EventParser,
    protected readonly translator: StreamTranslator,
    protected readonly fail: (e: unknown) => GatewayError,
    /** The error for a stream that ends before the upstream said it is complete. */
    private readonly unfinished: () => GatewayError,
  ) {
    // Each comes at most once for this body, or is the last of its kind: `on` spares the wrappers `once` makes.
    body.on('data', (bytes: Uint8Array) => {
      if (!this.ended && this.reads.push(bytes) === 1) queueMicrotask(this.parseReads);
    });
    // The end and an error come after the bytes before them are parsed (they may come before the microtask).
    body.on('end', () => this.end());
    body.on('error', (e: unknown) => {
      this.parse();
      this.stop(this.fail(e));
    });
  }

  next(): Promise<IteratorResult<ChatCompletionChunk>> {
    if (this.head < this.queue.length) return Promise.resolve({ done: false, value: this.take() });
    if (this.ended) {
      const failure = this.failure;
      this.failure = null; // thrown once, then the iterator is done
      return failure ? Promise.reject(failure) : Promise.resolve(DONE);
    }
    return new Promise((resolve, reject) => (this.waiter = { resolve, reject }));
  }

  /** A chunk already queued, without a promise (ChunkSource); the end and a failure come from next(). */
  poll(): ChatCompletionChunk | undefined {
    return this.head < this.queue.length ? this.take() : undefined;
  }

  /** What the upstream reported of its usage so far, for a stream that ends early (see StreamTranslator). */
  usageSoFar(): Usage | undefined {
    return this.translator.usageSoFar?.();
  }

  /** The reader leaves early: the upstream request is stopped, what was queued dropped. */
  return(): Promise<IteratorResult<ChatCompletionChunk>> {
    this.queue = [];
    this.head = 0;
    this.queued = 0;
    this.reads = [];
    if (!this.ended) {
      this.ended = true;
      this.body.destroy();
    }
    this.failure = null;
    this.wake();
    return Promise.resolve(DONE);
  }

  private take(): ChatCompletionChunk {
    const value = this.queue[this.head++];
    this.queued -= chunkCount(value);
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
      this.queued = 0;
      if (this.paused) {
        this.paused = false;
        this.body.resume();
      }
    }
    return value;
  }

  /** The bytes read so far, as one (copied once rather than decoded once a piece). */
  private parse(): void {
    const reads = this.reads;
    if (reads.length === 0 || this.ended) return;
    this.reads = [];
    const parser = this.parser;
    try {
      if (parser.pushPieces) parser.pushPieces(reads, this.events);
      else parser.push(reads.length === 1 ? reads[0] : Buffer.concat(reads), this.events);
      this.translate();
    } catch (e) {
      this.stop(this.fail(e));
      return;
    } finally {
      this.events.length = 0;
    }
    if (!this.paused && !this.pauseCheck && this.queued >= HIGH_WATER) {
      this.pauseCheck = true;
      setImmediate(this.checkPause);
    }
    this.wake();
  }

  private end(): void {
    this.parse();
    if (this.ended) return;
    try {
      this.parser.end(this.events);
      this.translate();
      this.add(this.translator.finish());
    } catch (e) {
      this.stop(this.fail(e));
      return;
    } finally {
      this.events.length = 0;
    }
    this.stop(this.translator.done ? null : this.unfinished());
  }

  /**
   * The parsed events' chunks, into the queue: a read's text chunks joined into runs where the translator can
   * (pushEvents), which a read-only stream writes and observes once.
   */
  protected translate(): void {
    const events = this.events;
    const t = this.translator;
    if (t.pushEvents) {
      const out: ChatCompletionChunk[] = [];
      try {
        t.pushEvents(events, out);
      } finally {
        this.add(out);
      }
    } else for (let i = 0; i < events.length; i++) this.add(t.push(events[i]));
  }

  protected add(chunks: ChatCompletionChunk[]): void {
    for (let i = 0; i < chunks.length; i++) {
      this.queued += chunkCount(chunks[i]);
      this.queue.push(chunks[i]);
    }
  }

  /** Nothing more comes: the reader gets what is queued, then `failure` (or the end). */
  private stop(failure: GatewayError | null): void {
    if (this.ended) return;
    this.ended = true;
    this.failure = failure;
    if (failure) this.body.destroy();
    this.wake();
  }

  /** A reader waiting for the next chunk gets it (or the end) now. */
  private wake(): void {
    const w = this.waiter;
    if (!w) return;
    if (this.head < this.queue.length) {
      this.waiter = null;
      w.resolve({ done: false, value: this.take() });
    } else if (this.ended) {
      this.waiter = null;
      const failure = this.failure;
      this.failure = null;
      if (failure) w.reject(failure);
      else w.resolve(DONE);
    }
  }
}

/**
 * An upstream stream that speaks the client's own wire (a same-wire attempt): translated as any other, for the
 * observers, usage and billing; each chunk also carries the bytes of the events that produced it (withFrame), for the
 * endpoint to write as they came. An event that produces no chunk (ping, content_block_stop) rides on the next one; the
 * upstream's error event rides on the stream's error, with the provider's secrets removed.
 */
export class SameWireChunks extends UpstreamChunks {
  private pending = '';

  constructor(
    body: Readable,
    parser: EventParser,
    translator: StreamTranslator,
    fail: (e: unknown) => GatewayError,
    unfinished: () => GatewayError,
    private readonly frame: (ev: UpstreamEvent) => string,
    private readonly redact: (text: string) => string,
  ) {
    super(body, parser, translator, fail, unfinished);
  }

  protected override translate(): void {
    const events = this.events;
    for (let i = 0; i < events.length; i++) {
      this.pending += this.frame(events[i]);
      let chunks: ChatCompletionChunk[];
      try {
        chunks = this.translator.push(events[i]);
      } catch (e) {
        // The upstream's error event (or an event that does not parse): its bytes go with the error.
        const error = this.fail(e);
        withNativeError(error, this.redact(this.pending));
        this.pending = '';
        throw error;
      }
      if (chunks.length > 0) {
        withFrame(chunks[0], this.pending);
        for (let j = 1; j < chunks.length; j++) withFrame(chunks[j], '');
        this.pending = '';
      }
      this.add(chunks);
    }
  }
}
