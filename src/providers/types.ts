import type { GatewayError } from '../errors';
import type { DeploymentConfig, ProviderConfig } from '../config/types';
import type { ChatCompletion, ChatCompletionChunk, ChatRequest, Usage } from '../types/openai';

/** Everything an adapter needs to know about where a request goes. */
export interface UpstreamTarget {
  provider: ProviderConfig;
  deployment: DeploymentConfig;
  /** Extra upstream headers the client may add (already filtered by the gateway). */
  extraHeaders?: Record<string, string>;
  /** The request's prompt-template fields, for raw-prompt providers (spec 4.1 advanced configuration). */
  promptOptions?: import('../prompt/index').PromptOptions;
}

/** A fully built upstream HTTP request; the transport sends it as is. */
export interface UpstreamRequest {
  url: string;
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  body: string;
}

/** Framing of a streamed upstream body. */
export type StreamFormat = 'sse' | 'ndjson' | 'aws-eventstream';

/** One framed event of an upstream stream: an SSE event, an NDJSON line, or an AWS event-stream message. */
export interface UpstreamEvent {
  event?: string;
  data: string;
}

/**
 * Per-stream translation state: the adapter turns each upstream event into zero or more
 * OpenAI chunks (it keeps tool-call indexes and the like), and `finish` flushes what the
 * upstream's end implies. A mid-stream provider error is thrown as a GatewayError.
 */
export interface StreamTranslator {
  push(event: UpstreamEvent): ChatCompletionChunk[];
  /**
   * The chunks of the events of one upstream read, appended to `out` as `push` of each would give them, except that
   * consecutive text chunks of one choice read in place may come as one run (ChatFrame.count,
   * docs/decisions/0065-text-runs.md). When an event throws, `out` holds the chunks of the events before it. For a
   * reader that takes the chunks only after the call, and does not ask for each event's own bytes.
   */
  pushEvents?(events: UpstreamEvent[], out: ChatCompletionChunk[]): void;
  finish(): ChatCompletionChunk[];
  /** True once the upstream said the stream is complete (e.g. `[DONE]`, `message_stop`). */
  readonly done: boolean;
  /**
   * For a stream that ends early (client gone, upstream broken): the usage the upstream reported so far (e.g.
   * Anthropic's `message_start` input and cache counts), its output counted by the gateway where the upstream has not
   * reported it (reasoning included). Undefined: the upstream reported nothing yet (the gateway counts it all).
   */
  usageSoFar?(): Usage | undefined;
}

export interface AdapterContext {
  /** The completion id the gateway assigns (stable across the request's attempts). */
  id: string;
  /** Unix seconds. */
  created: number;
  /** The model id as the client knows it. */
  model: string;
  /** Whether the client asked for usage in the stream. */
  includeUsage: boolean;
  /** The configured name of the provider this attempt goes to (error messages name it). */
  provider?: string;
  /** The client asked for reasoning without its text (`reasoning.exclude`): adapters drop it. */
  excludeReasoning?: boolean;
}

/** Pure translation between the OpenAI wire format and one provider's: no Koa, no I/O. */
export interface HttpProviderAdapter {
  kind: 'http';
  type: string;
  /** Body fields this provider type accepts (beyond model and messages). */
  supportedParams: readonly string[];
  /**
   * Body fields no adapter knows reach the upstream as sent (OpenAI-compatible servers);
   * otherwise the params plugin drops and names them.
   */
  forwardsUnknownParams?: boolean;
  /**
   * Parameters present with a value this provider cannot honour (e.g. Ollama's tool_choice
   * "required"): dropped and named like unsupported ones.
   */
  unsupportedValues?(req: ChatRequest): string[];
  streamFormat: StreamFormat;
  buildRequest(req: ChatRequest, target: UpstreamTarget, stream: boolean): UpstreamRequest;
  parseResponse(body: unknown, ctx: AdapterContext): ChatCompletion;
  createStreamTranslator(ctx: AdapterContext): StreamTranslator;
  /** Map an upstream error status and its (parsed if JSON, else text) body. */
  mapError(
    status: number,
    body: unknown,
    headers: Record<string, string | string[] | undefined>,
    provider: string,
  ): GatewayError;
  /**
   * Inbound wire formats this provider speaks natively (docs/architecture.md, "same wire"): a request that came in on
   * one of them goes upstream in its own form and the upstream's answer goes back as it came; the chain still sees
   * the translated chat request, and the answer is still parsed (parseResponse, createStreamTranslator) for usage,
   * records and observers.
   */
  sameWire?: Partial<Record<InboundWire, SameWire>>;
}

/** A wire format the gateway serves besides chat (an endpoint's own request and answer): Anthropic's Messages. */
export type InboundWire = 'anthropic-messages';

/** A request as its client sent it, kept beside the translated chat request for a same-wire attempt. */
export interface SameWireRequest {
  wire: InboundWire;
  /** The client's body as parsed; never changed (an attempt copies it with its deployment's model). */
  body: Record<string, unknown>;
  /** The client's headers of this wire that reach the upstream unchanged (anthropic-version, anthropic-beta). */
  headers: Record<string, string>;
  /** A token count (Anthropic's count_tokens) instead of an answer: the adapter's `countTokens`. */
  count?: boolean;
}

/** How an adapter sends a request of an inbound wire it speaks natively. */
export interface SameWire {
  /** The client's body with only `model` replaced by the deployment's; the wire's headers as the client sent them. */
  buildRequest(req: SameWireRequest, target: UpstreamTarget, stream: boolean): UpstreamRequest;
  /** An upstream stream event as the client gets it: its name and data as the upstream sent them. */
  frameEvent(ev: UpstreamEvent): string;
  /** The provider's own token count for the request, and how to read it from the answer. */
  countTokens?: {
    buildRequest(req: SameWireRequest, target: UpstreamTarget): UpstreamRequest;
    parse(body: unknown): number | undefined;
  };
}

/** A provider that answers in process (the built-in mock): no transport. */
export interface LocalProvider {
  kind: 'local';
  type: string;
  supportedParams: readonly string[];
  complete(req: ChatRequest, target: UpstreamTarget, ctx: AdapterContext, signal: AbortSignal): Promise<ChatCompletion>;
  stream(
    req: ChatRequest,
    target: UpstreamTarget,
    ctx: AdapterContext,
    signal: AbortSignal,
  ): AsyncIterable<ChatCompletionChunk>;
}

export type ProviderAdapter = HttpProviderAdapter | LocalProvider;
