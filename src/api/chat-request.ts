import { errors, GatewayError } from '../errors';
import type { GatewayRequestOptions } from '../pipeline/state';
import type { ChatRequest } from '../types/openai';
import { PROMPT_FIELDS } from '../prompt/index';

/** The shortest `timeout` a request may give, in seconds (the gateway's timers count whole milliseconds). */
const MIN_TIMEOUT_S = 0.001;
/**
 * Body fields that configure the gateway itself (spec 4.1: timeout, headers, metadata and
 * the advanced configuration; OpenRouter's `models` and `provider`; `store`). They are
 * taken out of the body into `options` and never forwarded upstream as body fields.
 */
export const GATEWAY_FIELDS = [
  'timeout',
  'headers',
  'extra_headers',
  'metadata',
  'api_base',
  'api_version',
  'api_key',
  'model_list',
  'deployment_id',
  'num_retries',
  'context_window_fallback_dict',
  'fallbacks',
  'input_cost_per_token',
  'output_cost_per_token',
  ...PROMPT_FIELDS,
  'models',
  'provider',
  'preset',
  'usage',
  'store',
  'transforms',
  'route',
] as const;

const GATEWAY_FIELD_SET: ReadonlySet<string> = new Set(GATEWAY_FIELDS);

export interface SplitRequest {
  request: ChatRequest;
  options: GatewayRequestOptions;
}

/** Keys that reach an object's prototype when assigned: never copied from a body into another object. */
export const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** The body's own keys minus prototype keys: the one safe way to copy a parsed body field by field. */
export function ownSafeKeys(v: Record<string, unknown>): string[] {
  return Object.keys(v).filter((k) => !PROTOTYPE_KEYS.has(k));
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The core's own checks, before any plugin: the body is an object with a model and a
 * messages array, and the few gateway fields the core itself uses are well-formed.
 * (The params plugin validates every other field.)
 */
export function splitChatRequest(
  body: unknown,
  limits: { defaultTimeoutS: number; maxTimeoutS: number },
): SplitRequest {
  if (!isRecord(body)) throw errors.invalidRequest('The request body must be a JSON object', null, 'invalid_body');
  const problems: GatewayError[] = [];
  if (typeof body.model !== 'string' || body.model.length === 0)
    problems.push(errors.invalidRequest('model is required and must be a non-empty string', 'model', 'invalid_model'));
  if (!Array.isArray(body.messages))
    problems.push(
      errors.invalidRequest(
        'messages is required and must be an array of chat messages',
        'messages',
        'invalid_messages',
      ),
    );
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean')
    problems.push(errors.invalidRequest('stream must be a boolean', 'stream', 'invalid_type'));
  if (body.stream_options !== undefined && body.stream_options !== null && body.stream !== true) {
    problems.push(
      errors.invalidRequest(
        'stream_options is only allowed when stream is true',
        'stream_options',
        'stream_options_without_stream',
      ),
    );
  }
  // Timeouts are kept in whole milliseconds: a positive one below 1 ms would round to none at all.
  if (body.timeout !== undefined && (typeof body.timeout !== 'number' || !(body.timeout >= MIN_TIMEOUT_S))) {
    problems.push(
      errors.invalidRequest(
        `timeout must be a number of seconds, at least ${MIN_TIMEOUT_S}`,
        'timeout',
        'invalid_timeout',
      ),
    );
  }
  for (const key of Object.keys(body)) {
    if (PROTOTYPE_KEYS.has(key))
      problems.push(errors.invalidRequest(`A body field may not be named '${key}'`, key, 'invalid_field'));
  }
  if (problems.length > 0) throw combine(problems);

  const request: Record<string, unknown> = {};
  const options: GatewayRequestOptions = { timeoutMs: 0 };
  for (const key of ownSafeKeys(body)) {
    if (GATEWAY_FIELD_SET.has(key)) options[key] = body[key];
    else request[key] = body[key];
  }
  const timeoutS =
    typeof body.timeout === 'number' ? Math.min(body.timeout, limits.maxTimeoutS) : limits.defaultTimeoutS;
  options.timeoutMs = Math.round(timeoutS * 1000);
  return { request: request as ChatRequest, options };
}

/** Several problems become one 400 naming the first field; the message lists them all. */
export function combine(problems: GatewayError[]): GatewayError {
  if (problems.length === 1) return problems[0];
  const first = problems[0];
  return new GatewayError({
    status: 400,
    type: 'invalid_request_error',
    code: first.code,
    param: first.param,
    message: problems.map((p) => (p.param ? `${p.param}: ${p.message}` : p.message)).join('; '),
    details: { errors: problems.map((p) => ({ param: p.param, code: p.code, message: p.message })) },
  });
}
