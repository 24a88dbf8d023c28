import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { toGatewayError, toSseErrorFrame, type GatewayError } from '../errors';
import type { ChatCompletionChunk, Usage } from '../types/openai';
import type { ChatStream, StreamEnd } from './chat-stream';
import { headList } from '../http/response-head';

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
 */
export async function writeStream(
  res: ServerResponse,
  stream: ChatStream,
  opts: WriteStreamOptions,
): Promise<StreamEnd> {
  // The head in one call; the caller's headers win over the stream's defaults, its request id over both. Layers, not
  // `{ ...headers, 'X-Request-Id': id }`: in optimized code this V8 gives an object made by a spread followed by a new
  // property a map of its own (a new map a request, and every load on it a miss: see src/store/holds.ts, madeHold).
  res.writeHead(200, headList(STREAM_HEADERS, opts.headers, { 'X-Request-Id': opts.requestId }));
  // Writes made in one turn of the loop leave in one syscall: the headers with the first
  // chunks, and every chunk parsed from one upstream read together. Nothing waits longer,
  // and the first chunk with content leaves at once (time to first token), not at the end
  // of the turn that may go on to translate the rest of the upstream's read.
  let corked = false;
  const uncork = () => {
    corked = false;
    res.uncork();
  };
  const cork = () => {
    if (corked) return;
    corked = true;
    res.cork();
    process.nextTick(uncork);
  };
  const write = (frame: string): boolean => {
    cork();
    return res.write(frame);
  };
  cork();
  res.flushHeaders();
  if (opts.framer) res.write(opts.framer.start());

  let cancelled = false;
  let error: GatewayError | null = null;
  let usage: Usage | null = null;
  let chunks = 0;
  let firstContentAt: bigint | null = null;
  let flushedFirst = false;
  const finishReasons: Array<string | null> = [];
  const observers = stream.observers;
  let ended: StreamEnd | null = null;

  const onClose = () => {
    if (!res.writableEnded) {
      cancelled = true;
      stream.abort(undefined);
    }
  };
  res.on('close', onClose);
  const onStop = () => stream.abort(opts.stop?.reason as GatewayError | undefined);
  opts.stop?.addEventListener('abort', onStop, { once: true });

  try {
    for (;;) {
      const next = await stream.chunks.next();
      if (next.done) break;
      const chunk: ChatCompletionChunk = next.value;
      const isUsageChunk = chunk.choices.length === 0 && chunk.usage != null;
      if (isUsageChunk) usage = chunk.usage ?? null;
      else {
        chunk.usage = null;
        for (const c of chunk.choices) {
          if (firstContentAt === null && hasContent(c.delta)) firstContentAt = process.hrtime.bigint();
          if (c.finish_reason) finishReasons[c.index] = c.finish_reason;
        }
      }
      const first = firstContentAt !== null && !flushedFirst;
      let out: ChatCompletionChunk | null = chunk;
      for (let i = 0; i < observers.length && out !== null; i++) {
        try {
          const r: ChatCompletionChunk | null | void = observers[i].onChunk?.(out);
          if (r !== undefined) out = r;
        } catch (e) {
          opts.logger.error({ err: e, observer: observers[i].name }, 'stream observer failed');
        }
      }
      if (cancelled) break;
      if (out === null || (isUsageChunk && !opts.includeUsage && !opts.framer)) continue;
      const frame = opts.framer ? opts.framer.chunk(out) : `data: ${JSON.stringify(out)}\n\n`;
      if (!frame) continue;
      chunks++;
      const ok = write(frame);
      if (first) {
        flushedFirst = true;
        if (corked) uncork();
      }
      if (!ok) await drained(res);
      for (let i = 0; i < observers.length; i++) {
        try {
          observers[i].onWritten?.(out);
        } catch (e) {
          opts.logger.error({ err: e, observer: observers[i].name }, 'stream observer failed');
        }
      }
    }
    if (!cancelled) {
      // A finished stream is settled and stored before [DONE]: a client that sees [DONE]
      // can read its stored response and its charge at once.
      const end = await notifyEnd(finish());
      write(opts.framer ? await opts.framer.end(end) : DONE);
    }
  } catch (e) {
    if (!cancelled) {
      error = toGatewayError(e);
      const frame = opts.framer ? await opts.framer.error(error) : toSseErrorFrame(error);
      if (!res.writableEnded && !res.destroyed) write(frame);
    }
  } finally {
    res.off('close', onClose);
    opts.stop?.removeEventListener('abort', onStop);
    if (!res.writableEnded) res.end();
    // Let the source clean up (timers, upstream socket) even when the loop left it early.
    stream.chunks.return?.(undefined)?.catch(() => undefined);
  }

  return ended ?? (await notifyEnd(finish()));

  function finish(): StreamEnd {
    if (usage === null) usage = stream.usageSoFar();
    return { usage, finishReasons, cancelled, error, chunks, firstContentAt, endedAt: process.hrtime.bigint() };
  }

  /** Every observer's onEnd, once. */
  async function notifyEnd(end: StreamEnd): Promise<StreamEnd> {
    ended = end;
    for (const o of observers) {
      try {
        await o.onEnd?.(end);
      } catch (e) {
        opts.logger.error({ err: e, observer: o.name }, 'stream observer failed at end');
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
