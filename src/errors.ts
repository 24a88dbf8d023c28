/**
 * The one catalogue of gateway errors and the one place that serializes them.
 *
 * Every failure a client can see is a GatewayError. It carries the HTTP status,
 * the OpenAI-style `type`, a stable `code`, the offending `param` and whether a
 * retry against another attempt could help. Three wire forms exist:
 *  - `/v1/*`: `{error:{message,type,param,code}}` (all strings; what the OpenAI SDK parses)
 *  - `/responses/*`: `application/problem+json` `{type,title,status,detail}`
 *  - after a stream has started: one `data: {"error":{...}}` SSE frame.
 * Messages never contain secrets: upstream bodies are reduced to their message text.
 */
import { redactSecrets } from './security/redact';
import { providerCode, type ErrorCode, type GatewayErrorCode } from './error-codes';
import { truncate } from './error-bodies';

export type ErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'insufficient_credits'
  | 'rate_limit_error'
  | 'upstream_error'
  | 'timeout_error'
  | 'server_error';

/** The catalogue of codes lives in error-codes.ts. */
export {
  ERROR_CODES,
  pluginCode,
  providerCode,
  type ErrorCode,
  type ForeignErrorCode,
  type GatewayErrorCode,
} from './error-codes';

export interface GatewayErrorInit {
  status: number;
  type: ErrorType;
  code: ErrorCode;
  message: string;
  param?: string | null;
  retryable?: boolean;
  /** Seconds the client (or the retry loop) should wait, from an upstream Retry-After. */
  retryAfter?: number;
  /** Extra details for problem+json and logs; never secrets. */
  details?: Record<string, unknown>;
  /** What caused it (kept for logs; never serialized to clients). */
  cause?: unknown;
}

/**
 * The brand that marks a GatewayError. It is a registered symbol, so an error made by
 * another copy of this module (a plugin that bundles its own, `npm run dev` beside a
 * built plugin) is still recognised: `instanceof GatewayError` and `isGatewayError` test it.
 */
const BRAND: unique symbol = Symbol.for('model-gateway.GatewayError') as never;

export class GatewayError extends Error {
  readonly [BRAND] = true;
  readonly status: number;
  readonly type: ErrorType;
  readonly code: ErrorCode;
  readonly param: string | null;
  readonly retryable: boolean;
  readonly retryAfter: number | undefined;
  readonly details: Record<string, unknown> | undefined;

  constructor(init: GatewayErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'GatewayError';
    this.status = init.status;
    this.type = init.type;
    this.code = init.code;
    this.param = init.param ?? null;
    this.retryable = init.retryable ?? false;
    this.retryAfter = init.retryAfter;
    this.details = init.details;
  }

  /** `x instanceof GatewayError` by brand, so that copies of this module agree; subclasses keep the prototype test. */
  static override [Symbol.hasInstance](v: unknown): boolean {
    if (this !== GatewayError) return Function.prototype[Symbol.hasInstance].call(this, v);
    return typeof v === 'object' && v !== null && (v as { [BRAND]?: unknown })[BRAND] === true;
  }
}

export function isGatewayError(e: unknown): e is GatewayError {
  return typeof e === 'object' && e !== null && (e as { [BRAND]?: unknown })[BRAND] === true;
}

/** The catalogue: one constructor per situation, so codes stay stable. */
export const errors = {
  invalidJson: (detail: string) =>
    new GatewayError({
      status: 400,
      type: 'invalid_request_error',
      code: 'invalid_json',
      message: `Request body is not valid JSON: ${detail}`,
    }),
  invalidRequest: (message: string, param: string | null = null, code: ErrorCode = 'invalid_request') =>
    new GatewayError({ status: 400, type: 'invalid_request_error', code, message, param }),
  bodyTooLarge: (limit: string) =>
    new GatewayError({
      status: 413,
      type: 'invalid_request_error',
      code: 'request_too_large',
      message: `Request body exceeds the limit of ${limit}`,
    }),
  unsupportedMediaType: () =>
    new GatewayError({
      status: 415,
      type: 'invalid_request_error',
      code: 'unsupported_media_type',
      message: 'Content-Type must be application/json',
    }),
  modelNotFound: (model: string) =>
    new GatewayError({
      status: 404,
      type: 'not_found_error',
      code: 'model_not_found',
      param: 'model',
      message: `The model '${truncate(model, 200)}' does not exist`,
    }),
  wrongEndpoint: (model: string, endpoint: string) =>
    new GatewayError({
      status: 400,
      type: 'invalid_request_error',
      code: 'model_endpoint_mismatch',
      param: 'model',
      message: `The model '${truncate(model, 200)}' does not serve ${endpoint}`,
    }),
  routeNotFound: (method: string, path: string) =>
    new GatewayError({
      status: 404,
      type: 'not_found_error',
      code: 'not_found',
      message: `No route for ${method} ${truncate(path, 200)}`,
    }),
  methodNotAllowed: (method: string, path: string) =>
    new GatewayError({
      status: 405,
      type: 'invalid_request_error',
      code: 'method_not_allowed',
      message: `Method ${method} is not allowed on ${truncate(path, 200)}`,
    }),
  unauthorized: (code: ErrorCode, message: string) =>
    new GatewayError({ status: 401, type: 'authentication_error', code, message }),
  hostNotAllowed: () =>
    new GatewayError({
      status: 403,
      type: 'permission_error',
      code: 'host_not_allowed',
      message: 'This gateway does not answer requests for that Host (server.allowed_hosts)',
    }),
  forbidden: (code: ErrorCode, message: string) =>
    new GatewayError({ status: 403, type: 'permission_error', code, message }),
  notFound: (code: ErrorCode, message: string, param: string | null = null) =>
    new GatewayError({ status: 404, type: 'not_found_error', code, message, param }),
  insufficientCredits: (code: ErrorCode, message: string) =>
    new GatewayError({ status: 402, type: 'insufficient_credits', code, message }),
  modelNotAllowed: (model: string, param = 'model') =>
    new GatewayError({
      status: 403,
      type: 'permission_error',
      code: 'model_not_allowed',
      param,
      message: `This key may not use the model '${truncate(model, 200)}'`,
    }),
  guardrailBlocked: (rule: string, side: 'input' | 'output') =>
    new GatewayError({
      status: 400,
      type: 'invalid_request_error',
      code: 'guardrail_blocked',
      param: side === 'input' ? 'messages' : null,
      message: `The ${side === 'input' ? 'request' : 'answer'} was blocked by the guardrail rule '${truncate(rule, 100)}'`,
      details: { rule, side },
    }),
  guardrailUnavailable: (check: string) =>
    new GatewayError({
      status: 503,
      type: 'server_error',
      code: 'guardrail_unavailable',
      message: `The guardrail check '${truncate(check, 100)}' could not run and its policy fails closed`,
      retryable: true,
      retryAfter: 1,
    }),
  upstreamTimeout: (provider: string) =>
    new GatewayError({
      status: 504,
      type: 'timeout_error',
      code: 'upstream_timeout',
      message: `Upstream provider '${provider}' timed out`,
      retryable: true,
    }),
  upstreamUnavailable: (provider: string, detail: string) =>
    new GatewayError({
      status: 502,
      type: 'upstream_error',
      code: 'upstream_unreachable',
      message: `Upstream provider '${provider}' could not be reached: ${truncate(detail, 200)}`,
      retryable: true,
    }),
  upstreamProtocol: (provider: string, detail: string) =>
    new GatewayError({
      status: 502,
      type: 'upstream_error',
      code: 'upstream_bad_response',
      message: `Upstream provider '${provider}' sent an answer the gateway could not read: ${truncate(detail, 200)}`,
      retryable: true,
    }),
  streamInterrupted: (provider: string, detail: string) =>
    new GatewayError({
      status: 502,
      type: 'upstream_error',
      code: 'stream_interrupted',
      message: `The stream from '${provider}' broke before it finished: ${truncate(detail, 200)}`,
      retryable: true,
    }),
  upstreamStreamError: (provider: string, detail: string) =>
    new GatewayError({
      status: 502,
      type: 'upstream_error',
      code: 'upstream_stream_error',
      message:
        `Upstream provider '${provider}' reported an error in its stream: ` + truncate(detail || 'no message', 500),
      retryable: true,
    }),
  upstreamClosed: (provider: string) =>
    new GatewayError({
      status: 502,
      type: 'upstream_error',
      code: 'upstream_closed',
      message: `Upstream provider '${provider}' closed the connection before answering`,
      retryable: true,
    }),
  shuttingDown: () =>
    new GatewayError({
      status: 503,
      type: 'server_error',
      code: 'shutting_down',
      message: 'The gateway is shutting down; retry the request',
      retryable: true,
      retryAfter: 1,
    }),
  clientClosed: () =>
    new GatewayError({
      status: 499,
      type: 'invalid_request_error',
      code: 'client_closed_request',
      message: 'The client closed the request',
    }),
  invalidHeaderValue: (name: string) =>
    new GatewayError({
      status: 400,
      type: 'invalid_request_error',
      code: 'invalid_header',
      param: 'headers',
      message: `The value of header '${truncate(name, 64)}' cannot be sent over HTTP`,
    }),
  upstreamTooLarge: (provider: string, what: string, limit: number) =>
    new GatewayError({
      status: 502,
      type: 'upstream_error',
      code: 'upstream_response_too_large',
      message: `Upstream provider '${provider}' sent ${what} larger than the gateway's limit of ${limit} bytes`,
      retryable: true,
    }),
  accountNameTaken: (name: string, id: string) =>
    new GatewayError({
      status: 409,
      type: 'invalid_request_error',
      code: 'account_name_taken',
      param: 'name',
      message: `An account named '${truncate(name, 64)}' already exists (${id}): use it, or choose another name`,
    }),
  reportReplayed: () =>
    new GatewayError({
      status: 409,
      type: 'invalid_request_error',
      code: 'report_replayed',
      message: 'This signed report was already handled; nothing changed',
    }),
  storeUnavailable: (retryAfter: number) =>
    new GatewayError({
      status: 503,
      type: 'server_error',
      code: 'store_unavailable',
      message: "The gateway's database is unavailable; retry shortly",
      retryAfter,
    }),
  internal: () =>
    new GatewayError({ status: 500, type: 'server_error', code: 'internal_error', message: 'Internal gateway error' }),
  noDeployment: (model: string) =>
    new GatewayError({
      status: 400,
      type: 'invalid_request_error',
      code: 'no_deployment',
      param: 'model',
      message: `No deployment of the model '${truncate(model, 200)}' can serve this request`,
    }),
  /** A limit of the gateway's own (not an upstream's): 429 with Retry-After in seconds. */
  rateLimited: (code: ErrorCode, message: string, retryAfter?: number) =>
    new GatewayError({ status: 429, type: 'rate_limit_error', code, message, retryAfter }),
  /** A plugin broke the middleware contract (next() twice, not awaited): a 500 whose log line names the plugin. */
  pluginContract: (plugin: string, detail: string) =>
    new GatewayError({
      status: 500,
      type: 'server_error',
      code: 'plugin_contract_violation',
      message: 'Internal gateway error',
      details: { plugin, detail },
    }),
};

/**
 * Map an upstream HTTP error status to a GatewayError, keeping its status class.
 * `message` must already be free of secrets (adapters pass the provider's own error text).
 */
export function upstreamStatusError(
  provider: string,
  status: number,
  message: string,
  upstreamCode?: string,
  retryAfter?: number,
): GatewayError {
  const code = upstreamCode === undefined ? undefined : providerCode(upstreamCode);
  // Anything credential-like goes, whatever the upstream echoed (routing also removes the configured key itself).
  const upstreamText = truncate(redactSecrets((message || 'no message').slice(0, 4000)), 500);
  const text = `Upstream provider '${provider}' answered ${status}: ${upstreamText}`;
  if (status === 401 || status === 403) {
    // The operator's upstream credentials failed: not the client's fault, not their key. The
    // upstream's own text is dropped: providers echo (part of) the key they were given.
    return new GatewayError({
      status: 502,
      type: 'upstream_error',
      code: code ?? 'upstream_auth_failed',
      message: `Upstream provider '${provider}' refused the gateway's credentials (${status})`,
    });
  }
  const m = upstreamMapping(status);
  return new GatewayError({
    status: m.status,
    type: m.type,
    code: code ?? m.code,
    message: text,
    ...(m.retryable ? { retryable: true, retryAfter } : {}),
  });
}

interface UpstreamMapping {
  status: number;
  type: ErrorType;
  code: GatewayErrorCode;
  /** Another attempt may succeed (and the upstream's Retry-After is kept). */
  retryable: boolean;
}

/** An upstream's error status as the client sees it; the status class is kept. */
function upstreamMapping(status: number): UpstreamMapping {
  if (status === 408 || status === 504)
    return { status: 504, type: 'timeout_error', code: 'upstream_timeout', retryable: true };
  if (status === 429) return { status: 429, type: 'rate_limit_error', code: 'upstream_rate_limited', retryable: true };
  if (status === 404) return { status: 404, type: 'not_found_error', code: 'upstream_not_found', retryable: false };
  if (status === 413)
    return { status: 413, type: 'invalid_request_error', code: 'upstream_request_too_large', retryable: false };
  if (status >= 400 && status < 500)
    return { status: 400, type: 'invalid_request_error', code: 'upstream_bad_request', retryable: false };
  return { status: 502, type: 'upstream_error', code: 'upstream_error', retryable: true };
}

/** Anything thrown that is not a GatewayError becomes an opaque 500. */
export function toGatewayError(e: unknown): GatewayError {
  return isGatewayError(e) ? e : errors.internal();
}

/** The wire forms, written by one place each (src/http/outer.ts, the stream writer): kept importable from here. */
export {
  toAnthropicError,
  toOpenAIBody,
  toProblem,
  toSseErrorFrame,
  truncate,
  type AnthropicErrorBody,
  type OpenAIErrorBody,
  type ProblemBody,
} from './error-bodies';
