import type { ChatCompletionChunk } from '../types/openai';
import type { UpstreamEvent } from './types';

/**
 * The same-wire hook's one piece of runtime (see HttpProviderAdapter.sameWire): on a stream whose attempt spoke the
 * client's own wire, each chunk carries the bytes of the upstream events that produced it (an event that produces no
 * chunk, such as a ping, rides on the next chunk), under a symbol (never serialized, kept by a spread). The endpoint's
 * same-wire framer writes them instead of translating the chunk; a chunk an observer withholds withholds its bytes.
 */
const FRAME = Symbol('same-wire frame');

type Framed = ChatCompletionChunk & { [FRAME]?: string };

/** Attach the upstream bytes that this chunk stands for. */
export function withFrame(chunk: ChatCompletionChunk, bytes: string): void {
  (chunk as Framed)[FRAME] = bytes;
}

/** The upstream bytes this chunk stands for ('' for a second chunk of one event), undefined if none were attached. */
export function frameOf(chunk: ChatCompletionChunk): string | undefined {
  return (chunk as Framed)[FRAME];
}

/** An SSE event as the upstream sent it: its name and its data, line for line. */
export function sseFrame(ev: UpstreamEvent): string {
  const data = ev.data.includes('\n') ? ev.data.split('\n').join('\ndata: ') : ev.data;
  return ev.event === undefined ? `data: ${data}\n\n` : `event: ${ev.event}\ndata: ${data}\n\n`;
}

const ERROR_FRAME = Symbol('same-wire error frame');

/** Attach to a stream's error the upstream's own bytes for it (its error event, and the events just before it). */
export function withNativeError(error: object, bytes: string): void {
  (error as { [ERROR_FRAME]?: string })[ERROR_FRAME] = bytes;
}

/** The upstream's own bytes for a stream's error, when the upstream sent one. */
export function nativeErrorOf(error: object): string | undefined {
  return (error as { [ERROR_FRAME]?: string })[ERROR_FRAME];
}
