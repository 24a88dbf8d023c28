import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { toGatewayError, toSseErrorFrame, type GatewayError } from '../errors';
import type { ChatCompletionChunk, Usage } from '../types/openai';
import type { ChatStream, StreamEnd } from './chat-stream';

export interface WriteStreamOptions {
  /** Whether the client asked for `stream_options.include_usage`. */
  includeUsage: boolean;
  headers: Record<string, string>;
  logger: Logger;
  /** Aborted by the gateway itself (shutdown deadline): the stream ends with this error. */
  stop?: AbortSignal;
}

const DONE = 'data: [DONE]\n\n';

/**
 * The one loop that writes a chat stream to the client: frames exactly `data: <json>\n\n`,
 * each flushed as it comes, `usage: null` on every chunk but the usage chunk (sent only
 * when the client asked), `[DONE]` at the end, one error event if the upstream breaks.
 */
export async function writeStream(res: ServerResponse, stream: ChatStream, opts: WriteStreamOptions): Promise<StreamEnd> {
  res.statusCode = 200;
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('Connection', 'keep-alive');
  res.setHeader('X-Accel-Buffering', 'no');
  for (const [k, v] of Object.entries(opts.headers)) res.setHeader(k, v);
  // Writes made in one turn of the loop leave in one syscall: the headers with the first
  // chunks, and every chunk parsed from one upstream read together. Nothing waits longer.
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

  let cancelled = false;
  let error: GatewayError | null = null;
  let usage: Usage | null = null;
  let chunks = 0;
  let firstContentAt: bigint | null = null;
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
      for (let i = 0; i < observers.length; i++) {
        try {
          observers[i].onChunk?.(chunk);
        } catch (e) {
          opts.logger.error({ err: e, observer: observers[i].name }, 'stream observer failed');
        }
      }
      if (cancelled) break;
      if (isUsageChunk && !opts.includeUsage) continue;
      chunks++;
      if (!write(`data: ${JSON.stringify(chunk)}\n\n`)) await drained(res);
    }
    if (!cancelled) {
      // A finished stream is settled and stored before [DONE]: a client that sees [DONE]
      // can read its stored response and its charge at once.
      await notifyEnd(finish());
      write(DONE);
    }
  } catch (e) {
    if (!cancelled) {
      error = toGatewayError(e);
      if (!res.writableEnded && !res.destroyed) write(toSseErrorFrame(error));
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
  return Boolean(delta.content || delta.tool_calls?.length || delta.function_call || delta.refusal);
}

function drained(res: ServerResponse): Promise<void> {
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
