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

/**
 * A chat chunk read without a parse (chat passthrough, docs/decisions/0035-chat-stream-passthrough.md), or a
 * translated one serialised from a template (0036): the frame to write as it is when every stream observer is
 * read-only, and the whole chunk, parsed and translated as before, for a stream that must go through the gateway's own
 * serialisation (an observer that may rewrite, another wire).
 */
export interface ChatFrame {
  /** `data: <the upstream's JSON, with the gateway's id and the client's model>\n\n`, or the translated chunk's. */
  readonly frame: string;
  /**
   * The same with `extra` (`,"name":value` members) added after the chunk's own members (at the end of a passed-through
   * one; before the `"usage":null` of a translated one, where the writer's own serialisation puts them).
   */
  frameWith(extra: string): string;
  /** The chunk as the translator makes it from a full parse (the same object a non-passthrough stream has). */
  full(): ChatCompletionChunk;
  /**
   * A run (docs/decisions/0065-text-runs.md): how many chunks of text, consecutive in one upstream read, this one
   * stands for: its content is their texts joined, `frame` their frames one after another. Undefined for one chunk.
   */
  readonly count?: number;
  /** A run's chunks, each with its own frame, for a stream that takes whole chunks (`full` is then not asked). */
  parts?(): ChatFrame[];
}

const CHAT_FRAME = Symbol('chat passthrough frame');

/** Attach to a chunk made from a cheap read of an upstream event the frame it stands for. */
export function withChatFrame(chunk: ChatCompletionChunk, frame: ChatFrame): void {
  (chunk as { [CHAT_FRAME]?: ChatFrame })[CHAT_FRAME] = frame;
}

/** The passthrough frame of a chunk read without a parse, undefined for a chunk made the usual way. */
export function chatFrameOf(chunk: ChatCompletionChunk): ChatFrame | undefined {
  return (chunk as { [CHAT_FRAME]?: ChatFrame })[CHAT_FRAME];
}

/**
 * Top-level fields the gateway may set on every chunk of a stream (ChatStream.stamp: the served provider): a chunk
 * whose upstream JSON has one of them is not read without a parse, so a stamped passthrough frame never repeats a key.
 */
export const STAMPABLE_FIELDS: readonly string[] = ['provider'];

/** How many of the stream's chunks `chunk` stands for: a run's count (ChatFrame.count), else 1. */
export function chunkCount(chunk: ChatCompletionChunk): number {
  return chatFrameOf(chunk)?.count ?? 1;
}
