/**
 * A GatewayError in each wire form the gateway answers with: OpenAI's error object (spec 2.5), problem+json (spec
 * 2.6), Anthropic's error object, and the one SSE frame that ends a started stream. Types only from ./errors, so the
 * two files make no runtime circle.
 */
import type { GatewayError } from './errors';

/** A message cut to `n` characters, marked where it was cut. */
export function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string; code: string };
}

/** Spec 2.5: all four fields are strings (param is '' when no field is at fault). */
export function toOpenAIBody(e: GatewayError): OpenAIErrorBody {
  return { error: { message: e.message, type: e.type, param: e.param ?? '', code: e.code } };
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
}

const PROBLEM_TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  402: 'Payment Required',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string; code: string };
}

/** Anthropic's error types by HTTP status (the SDKs switch on them). */
function anthropicType(e: GatewayError): string {
  if (e.status === 400 || e.status === 422) return 'invalid_request_error';
  if (e.status === 401) return 'authentication_error';
  if (e.status === 402) return 'billing_error';
  if (e.status === 403) return 'permission_error';
  if (e.status === 404) return 'not_found_error';
  if (e.status === 413) return 'request_too_large';
  if (e.status === 429) return 'rate_limit_error';
  if (e.status === 503 || e.status === 529) return 'overloaded_error';
  if (e.status === 504) return 'timeout_error';
  return 'api_error';
}

/**
 * An error in Anthropic's shape (POST /v1/messages and its stream's `error` event):
 * `{"type":"error","error":{"type":...,"message":...}}`, plus the gateway's code.
 */
export function toAnthropicError(e: GatewayError): AnthropicErrorBody {
  return { type: 'error', error: { type: anthropicType(e), message: truncate(e.message, 2000), code: e.code } };
}

/** Spec 2.6 / RFC 9457. `type` is a stable URI-like reference to the error code. */
export function toProblem(e: GatewayError): ProblemBody {
  return {
    type: `urn:gateway:error:${e.code}`,
    title: PROBLEM_TITLES[e.status] ?? 'Error',
    status: e.status,
    detail: e.message,
    code: e.code,
  };
}

/** The one SSE frame that ends a stream which has already started. */
export function toSseErrorFrame(e: GatewayError): string {
  return `data: ${JSON.stringify(toOpenAIBody(e))}\n\n`;
}
