import type { RequestAbort } from './request-abort';
import type { ChatCompletion, ChatRequest } from '../types/openai';
import type { DeploymentConfig, ModelConfig, ProviderConfig } from '../config/types';
import type { ChatStream } from '../stream/chat-stream';
import type { InboundWire, SameWireRequest } from '../providers/types';
import { countPromptTokens } from '../tokens/count';
import type { EmbeddingsRequest, EmbeddingsResponse } from '../types/embeddings';
import type { GuardrailEvent } from '../guardrails/contract';

/**
 * What the client sent alongside the chat fields, that the gateway consumes itself (spec 4.1, advanced configuration).
 */
export interface GatewayRequestOptions {
  timeoutMs: number;
  headers?: Record<string, string>;
  metadata?: Record<string, unknown>;
  [k: string]: unknown;
}

/** One upstream attempt the routing plugin will make. */
export interface Attempt {
  model: ModelConfig;
  deployment: DeploymentConfig;
  provider: ProviderConfig;
  /** The request as this attempt sends it (fallbacks may override parameters). */
  request: ChatRequest;
  /** 0 for the first try of this model group; n for its n-th retry (backoff before it). */
  retry?: number;
}

/**
 * The plan that `fallback` writes and `routing` executes. Without a fallback plugin, routing plans one attempt itself.
 */
export interface AttemptPlan {
  /** Every attempt in order: retries and fallback models already expanded. */
  attempts: Attempt[];
  /** Used at once, instead of what is left, when an upstream says the prompt is too long. */
  contextFallback?: Attempt[];
  backoff?: { baseMs: number; maxMs: number; retryAfterMaxMs: number };
  /** The most upstream calls the request may make, whatever the lists hold (refused attempts do not count). */
  maxAttempts?: number;
}

/**
 * The answer routing leaves. `wire`: the attempt spoke the request's inbound wire (a same-wire attempt, see
 * HttpProviderAdapter.sameWire): `native` holds the upstream's answer as its bytes, and each chunk of a stream the
 * bytes of its events (frameOf); `body` and the chunks are still the chat view every plugin reads.
 */
export type ChatResult =
  | { kind: 'completion'; body: ChatCompletion; wire?: InboundWire; native?: Buffer }
  | { kind: 'stream'; stream: ChatStream; wire?: InboundWire }
  | { kind: 'embeddings'; body: EmbeddingsResponse };

/** Which endpoint the request came in on; the chain is the same for all three. */
export type Operation = 'chat' | 'responses' | 'embeddings' | 'messages';

/**
 * What a caller may do: `admin` everything; `operator` accounts, keys and limits but not the admin key or SSO settings;
 * `viewer` read-only analytics; `account` its own account's data (every API key of an account).
 */
export type Role = 'admin' | 'operator' | 'viewer' | 'account';

/** The authenticated caller, set by the auth plugin. */
export interface Principal {
  keyHash: string;
  keyLabel: string;
  accountId: string;
  isAdmin: boolean;
  /** Absent: `admin` when isAdmin, else `account`. */
  role?: Role;
  [k: string]: unknown;
}

/**
 * Record of one attempt of the plan, kept for headers, metrics and generation records: made (`ok`, `error`), or
 * `skipped` when a guard refused it (nothing reached the upstream; `guard` names it, `error` says why).
 */
export interface AttemptRecord {
  provider: string;
  deployment: string;
  model: string;
  status: 'ok' | 'error' | 'skipped';
  error?: { code: string; status: number };
  /** The guard that refused a skipped attempt. */
  guard?: string;
  latencyMs: number;
}

/**
 * What the response cache (the cache plugin) did for a request: `hit` (the answer came from the cache, no upstream
 * call), `miss` (looked up, not found: the answer is stored), `bypass` (not looked up: the model, the key, the
 * client's Cache-Control or a non-deterministic request). Credit bills a hit `charge` times the usual price; the
 * generation record keeps `status`, `entry` and `similarity`; limits releases a hit's admission unless `countsLimits`.
 */
export interface CacheOutcome {
  status: 'hit' | 'miss' | 'bypass';
  /** A hit: the part of the usual price billed, 0 (free) to 1 (full); each per-token price times it, rounded. */
  charge?: number;
  /** A hit: the entry served (the digest of its key). */
  entry?: string;
  /** A semantic hit: the cosine similarity of the prompt to the matched entry's. */
  similarity?: number;
  /** A hit still counts against the rate limits (the operator's `count_rate_limits`). */
  countsLimits?: boolean;
}

/**
 * Called by routing when an upstream attempt starts; the returned function is called
 * with its record when it ends (tracing makes a child span of each attempt).
 */
export type AttemptHook = (attempt: Attempt) => (record: AttemptRecord) => void;

/**
 * The one typed per-request object (ctx.state.gateway). Plugins extend it through
 * `extensions`, keyed by plugin name, rather than by adding loose fields.
 */
export interface GatewayState {
  requestId: string;
  /**
   * The id of what this request produces (`chatcmpl-...`, or `resp_...` for /v1/responses),
   * set once by the core: the answer's id, the generation record's and the stored response's,
   * the same across retries and fallbacks.
   */
  readonly completionId: string;
  /** process.hrtime.bigint() when the request arrived. */
  startedAt: bigint;
  /**
   * chat: /v1/chat/completions; responses: /v1/responses mapped onto `request`; embeddings: `embeddings` holds the
   * request.
   */
  operation: Operation;
  request: ChatRequest;
  /** The embeddings request (operation 'embeddings'); `request` then carries only model and user. */
  embeddings?: EmbeddingsRequest;
  options: GatewayRequestOptions;
  /**
   * The request as its client sent it, on an endpoint of another wire (/v1/messages): an attempt whose adapter speaks
   * that wire sends it as it is (HttpProviderAdapter.sameWire); undefined on chat.
   */
  inbound?: SameWireRequest;
  /** The model the client asked for, resolved from config. */
  model: ModelConfig;
  principal?: Principal;
  plan?: AttemptPlan;
  result?: ChatResult;
  attempts: AttemptRecord[];
  /** The attempt that answered, set by routing: its deployment's price is charged and its provider named. */
  served?: Attempt;
  /** The model variant the request named (`model:floor`, `model:nitro`), kept in the generation record. */
  variant?: string;
  /** Response headers to send (X-Gateway-*). */
  responseHeaders: Record<string, string>;
  /** Aborted when the client goes away or the gateway gives up on the request (made on first use: see `abort`). */
  readonly signal: AbortSignal;
  /** The same abort without an AbortSignal: `aborted`, `reason` and `onAbort(listener)` cost next to nothing. */
  readonly abort: RequestAbort;
  /** The prompt's token count by the gateway's tokenizer, once computed (see promptTokens()). */
  promptTokens?: number;
  /** Upstream time spent (ms), so metrics can compute the gateway-added part. */
  upstreamMs: number;
  /** Headers the gateway itself adds to upstream requests (e.g. W3C traceparent). */
  upstreamHeaders?: Record<string, string>;
  attemptHooks?: AttemptHook[];
  /** What the response cache did for this request, when the cache plugin is in the chain. */
  cache?: CacheOutcome;
  /**
   * Run by the core once the whole chain has returned, in order, before a plain answer is
   * written: they see the final body, after every plugin's after-next() edits (storage keeps
   * exactly what the client gets). Streams use observers' onWritten / onEnd instead.
   */
  beforeAnswer?: Array<() => Promise<void> | void>;
  /** What guardrails did to this request (rule, side, action; never a matched value), kept in its generation record. */
  guardrails?: GuardrailEvent[];
  extensions: Record<string, unknown>;
}

declare module 'koa' {
  interface DefaultState {
    gateway: GatewayState;
  }
}

/** The request's prompt tokens, counted once per request however many plugins ask. */
export function promptTokens(s: GatewayState): number {
  return (s.promptTokens ??= countPromptTokens(s.request));
}
