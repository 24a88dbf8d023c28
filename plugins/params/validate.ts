import type { ErrorObject } from 'ajv';
import { errors, type ChatRequest, type GatewayError, type GatewayErrorCode } from '../../src/plugin';
import { requests } from './generated/requests';
import { NON_EMPTY } from './request-schema';

// Generated at build time from ./request-schema.ts (scripts/gen-validators.js).
const validateRequest = requests.chatRequest;
const validateOptions = requests.gatewayOptions;

/**
 * `/messages/2/name` -> `messages[2].name`; array positions in brackets, object keys after dots (the data tells which).
 */
export function paramPath(pointer: string, root: unknown): string {
  let out = '';
  let node: unknown = root;
  for (const part of pointer.split('/').slice(1)) {
    const key = part.replace(/~1/g, '/').replace(/~0/g, '~');
    out += Array.isArray(node) ? `[${key}]` : out ? `.${key}` : key;
    node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined;
  }
  return out;
}

const CODES: Record<string, GatewayErrorCode> = {
  type: 'invalid_type',
  anyOf: 'invalid_type',
  oneOf: 'invalid_type',
  const: 'invalid_value',
  enum: 'invalid_value',
  minimum: 'out_of_range',
  maximum: 'out_of_range',
  exclusiveMinimum: 'out_of_range',
  exclusiveMaximum: 'out_of_range',
  minItems: 'invalid_length',
  maxItems: 'too_many_items',
  minLength: 'invalid_length',
  maxLength: 'invalid_length',
  pattern: 'invalid_format',
  propertyNames: 'invalid_format',
  required: 'missing_field',
};

function describe(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `must be ${String(p.comparison)} ${String(p.limit)}`;
    case 'enum':
      return `must be one of: ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(p.allowedValue)}`;
    case 'maxItems':
      return `must have at most ${String(p.limit)} items`;
    case 'minItems':
      return `must have at least ${String(p.limit)} item${p.limit === 1 ? '' : 's'}`;
    case 'pattern':
      return p.pattern === NON_EMPTY ? 'must not be empty' : `must match ${String(p.pattern)}`;
    case 'propertyNames':
      return 'must have integer token ids as keys';
    case 'anyOf':
      return 'has none of the allowed forms';
    default:
      return e.message ?? 'is invalid';
  }
}

/** ajv errors as GatewayErrors, one per field: the most specific error of each path wins. */
export function fromAjv(errs: readonly ErrorObject[], root: unknown): GatewayError[] {
  const byPath = new Map<string, ErrorObject[]>();
  for (const e of errs) {
    if (e.keyword === 'if' || (e.keyword === 'propertyNames' && e.instancePath === '')) continue;
    const path =
      e.keyword === 'required'
        ? `${e.instancePath}/${(e.params as { missingProperty: string }).missingProperty}`
        : e.instancePath;
    const list = byPath.get(path) ?? [];
    list.push(e);
    byPath.set(path, list);
  }
  const out: GatewayError[] = [];
  for (const [path, list] of byPath) {
    // Inside an anyOf every branch reports; the anyOf itself says it best, unless a branch
    // failed on a range or count (then the value had the right type and that is the news).
    const specific = list.filter(
      (e) => !['type', 'anyOf', 'oneOf', 'const', 'enum'].includes(e.keyword) || list.length === 1,
    );
    const chosen = specific.length > 0 ? specific[0] : (list.find((e) => e.keyword === 'anyOf') ?? list[0]);
    const param = paramPath(path, root);
    const what = chosen.keyword === 'required' ? 'is required' : describe(chosen);
    out.push(
      errors.invalidRequest(`${param || 'body'} ${what}`, param || null, CODES[chosen.keyword] ?? 'invalid_value'),
    );
  }
  return out;
}

/** Rules between fields that JSON Schema does not say well. */
function relations(r: ChatRequest, room: (() => number | null) | null): GatewayError[] {
  const out: GatewayError[] = [];
  r.messages?.forEach((m, i) => {
    if (!m || typeof m !== 'object') return;
    if (m.role === 'function' && typeof m.name !== 'string')
      out.push(
        errors.invalidRequest(
          `messages[${i}].name is required for role 'function' (the function's name, ${'^[a-zA-Z0-9_]{1,64}$'})`,
          `messages[${i}].name`,
          'missing_field',
        ),
      );
    if (m.role === 'tool' && typeof m.tool_call_id !== 'string')
      out.push(
        errors.invalidRequest(
          `messages[${i}].tool_call_id is required for role 'tool'`,
          `messages[${i}].tool_call_id`,
          'missing_field',
        ),
      );
    const calls =
      m.role === 'assistant' &&
      ((Array.isArray(m.tool_calls) && m.tool_calls.length > 0) || m.function_call !== undefined);
    if (m.content === undefined && !calls)
      out.push(errors.invalidRequest(`messages[${i}].content is required`, `messages[${i}].content`, 'missing_field'));
    if (m.content === null && m.role !== 'assistant')
      out.push(
        errors.invalidRequest(
          `messages[${i}].content may be null only for assistant messages`,
          `messages[${i}].content`,
          'invalid_type',
        ),
      );
  });
  if (r.top_logprobs !== undefined && r.logprobs !== true)
    out.push(errors.invalidRequest('top_logprobs requires logprobs: true', 'top_logprobs', 'invalid_combination'));
  if (r.parallel_tool_calls !== undefined && !(Array.isArray(r.tools) && r.tools.length > 0))
    out.push(
      errors.invalidRequest(
        'parallel_tool_calls applies only when tools are given',
        'parallel_tool_calls',
        'invalid_combination',
      ),
    );
  const forced = typeof r.tool_choice === 'object' && r.tool_choice !== null ? r.tool_choice.function?.name : undefined;
  if (forced !== undefined && Array.isArray(r.tools) && !r.tools.some((t) => t?.function?.name === forced)) {
    out.push(
      errors.invalidRequest(`tool_choice names '${forced}', which is not in tools`, 'tool_choice', 'invalid_value'),
    );
  }
  if (r.tool_choice !== undefined && !Array.isArray(r.tools))
    out.push(
      errors.invalidRequest('tool_choice applies only when tools are given', 'tool_choice', 'invalid_combination'),
    );
  const maxPromptRoom = room !== null && typeof r.max_tokens === 'number' ? room() : null;
  if (maxPromptRoom !== null && typeof r.max_tokens === 'number' && r.max_tokens > maxPromptRoom) {
    out.push(
      errors.invalidRequest(
        `max_tokens must be at most the context length minus the prompt length (${maxPromptRoom})`,
        'max_tokens',
        'out_of_range',
      ),
    );
  }
  return out;
}

/**
 * Every problem of a chat request, in a stable order (schema order, then relations, then
 * the gateway's own fields). `room` is the model's context length minus the prompt's
 * tokens, for the max_tokens bound; asked only of a request with max_tokens (it may count the prompt).
 */
export function validateChatRequest(
  request: unknown,
  options: Record<string, unknown>,
  room: () => number | null,
): GatewayError[] {
  const problems: GatewayError[] = [];
  if (!validateRequest(request)) problems.push(...fromAjv(validateRequest.errors ?? [], request));
  const r = request as ChatRequest;
  problems.push(...relations(r, problems.length === 0 ? room : null));
  if (!validateOptions(options)) problems.push(...fromAjv(validateOptions.errors ?? [], options));
  return problems;
}
