/**
 * @module
 * A Responses request as a chat body: the fields the gateway honours, refuses or passes over, the tools, the text
 * format and reasoning; its errors in the Responses API's own terms. The input items become messages in ./items.ts.
 */
import { errors, GatewayError, isGatewayError } from '../../errors';
import type { ChatMessage } from '../../types/openai';
import type { InputItem, ResponsesToolChoice, TextFormat } from '../../types/responses';
import { combine, GATEWAY_FIELDS } from '../chat-request';
import { itemsToMessages } from './items';
import { mapToolChoice, mapTools, NO_TOOLS, type ToolMap } from './tools';

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Fields of a Responses request the gateway honours (or that are its own). */
const HONOURED = new Set<string>([
  'model',
  'input',
  'instructions',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'temperature',
  'top_p',
  'max_output_tokens',
  'text',
  'reasoning',
  'user',
  'previous_response_id',
  'stream',
  'top_logprobs',
  'service_tier',
  'include',
  'stream_options',
  ...GATEWAY_FIELDS,
]);

/**
 * Fields the gateway cannot honour where honouring them matters: a 400 saying why. Every other field it does not
 * honour (client_metadata, prompt_cache_key, safety_identifier, max_tool_calls, truncation, context_management,
 * unknown ones) changes nothing the client relies on: it is ignored and named in X-Gateway-Dropped-Params.
 */
const REFUSED: Record<string, string> = {
  background:
    'background responses are not supported: the gateway answers while the request is open and keeps no queue to poll',
  conversation:
    'conversation is not supported: the gateway keeps no conversation objects; continue with previous_response_id ' +
    'or send the earlier items in input',
  prompt:
    'prompt templates are not supported: they are stored in the OpenAI dashboard by id and the gateway cannot ' +
    'resolve them; send instructions and input instead',
};

/** Values of refused or dropped fields that ask for nothing (the defaults): no 400, no header entry. */
function asksNothing(k: string, v: unknown): boolean {
  if (v === null || v === undefined) return true;
  if (k === 'background') return v === false;
  if (k === 'truncation') return v === 'disabled';
  return false;
}

/** The `include` values the gateway honours (reasoning items always carry encrypted_content when there is any). */
const INCLUDED = new Set(['reasoning.encrypted_content']);

function responseFormat(f: TextFormat): Record<string, unknown> | undefined {
  if (!isRecord(f) || f.type === 'text') return undefined;
  if (f.type === 'json_object') return { type: 'json_object' };
  if (f.type === 'json_schema' && typeof f.name === 'string' && isRecord(f.schema)) {
    return {
      type: 'json_schema',
      json_schema: {
        name: f.name,
        schema: f.schema,
        ...(f.description ? { description: f.description } : {}),
        ...(typeof f.strict === 'boolean' ? { strict: f.strict } : {}),
      },
    };
  }
  throw errors.invalidRequest(
    'text.format must be {type: text}, {type: json_object} or {type: json_schema, name, schema}',
    'text.format',
    'invalid_value',
  );
}

/** A Responses request as the chat request the chain runs, the client's tools, and what was ignored. */
export interface MappedRequest {
  chat: Record<string, unknown>;
  tools: ToolMap;
  /** Fields, tools and include values the gateway ignored: X-Gateway-Dropped-Params. */
  dropped: string[];
}

/**
 * A Responses request as the chat body the chain runs: instructions -> system message,
 * the conversation (earlier turns, then `input`) -> messages, function, custom and namespace
 * tools -> functions, text.format -> response_format, max_output_tokens -> max_tokens,
 * reasoning.effort -> reasoning_effort. Gateway fields (timeout, metadata, store, fallbacks...)
 * pass as they are. What it cannot honour is refused (REFUSED) or ignored and named.
 */
export function toChatBody(body: Record<string, unknown>, items: InputItem[]): MappedRequest {
  const problems: GatewayError[] = [];
  const dropped: string[] = [];
  for (const k of Object.keys(body)) {
    if (HONOURED.has(k) || asksNothing(k, body[k])) continue;
    if (REFUSED[k]) problems.push(errors.invalidRequest(REFUSED[k], k, 'unsupported_parameter'));
    else dropped.push(k);
  }
  if (body.instructions !== undefined && body.instructions !== null && typeof body.instructions !== 'string')
    problems.push(errors.invalidRequest('instructions must be a string', 'instructions', 'invalid_type'));
  if (body.tools !== undefined && body.tools !== null && !Array.isArray(body.tools))
    problems.push(errors.invalidRequest('tools must be a list', 'tools', 'invalid_type'));
  if (body.include !== undefined && body.include !== null && !Array.isArray(body.include))
    problems.push(errors.invalidRequest('include must be a list', 'include', 'invalid_type'));
  if (problems.length > 0) throw combine(problems);
  for (const v of (body.include as unknown[] | null | undefined) ?? [])
    if (!INCLUDED.has(String(v))) dropped.push(`include[${String(v)}]`);

  const tools = Array.isArray(body.tools) ? mapTools(body.tools) : NO_TOOLS;
  dropped.push(...tools.dropped);
  const messages: ChatMessage[] =
    typeof body.instructions === 'string' ? [{ role: 'system', content: body.instructions }] : [];
  messages.push(...itemsToMessages(items, { tools, dropped }));
  const chat: Record<string, unknown> = { model: body.model, messages };
  for (const k of ['temperature', 'top_p', 'user', 'stream', 'service_tier', ...GATEWAY_FIELDS])
    if (body[k] !== undefined) chat[k] = body[k];
  // Responses accepts tool_choice and parallel_tool_calls without tools; chat does not.
  if (tools.tools.length > 0) {
    chat.tools = tools.tools;
    if (body.tool_choice !== undefined && body.tool_choice !== null) {
      const choice = mapToolChoice(body.tool_choice as ResponsesToolChoice, tools, dropped);
      if (choice !== undefined) chat.tool_choice = choice;
    }
    if (body.parallel_tool_calls !== undefined) chat.parallel_tool_calls = body.parallel_tool_calls;
  }
  if (body.max_output_tokens !== undefined && body.max_output_tokens !== null) chat.max_tokens = body.max_output_tokens;
  if (typeof body.top_logprobs === 'number') Object.assign(chat, { logprobs: true, top_logprobs: body.top_logprobs });
  const text = isRecord(body.text) ? body.text : {};
  const format = text.format === undefined ? undefined : responseFormat(text.format as TextFormat);
  if (format) chat.response_format = format;
  if (text.verbosity !== undefined && text.verbosity !== null) chat.verbosity = text.verbosity;
  const effort = isRecord(body.reasoning) ? body.reasoning.effort : undefined;
  if (effort !== undefined && effort !== null) chat.reasoning_effort = effort;
  return { chat, tools, dropped };
}

/** Chat field names in errors from the chain, as the Responses request calls them. */
const RESPONSES_NAMES: ReadonlyArray<[RegExp, string]> = [
  [/^max_tokens/, 'max_output_tokens'],
  [/^response_format/, 'text.format'],
  [/^reasoning_effort/, 'reasoning.effort'],
  [/^verbosity/, 'text.verbosity'],
  // messages[i] stays as is: its index counts the instructions' system message, not the client's input items.
];

/** An error about a chat field, renamed to the Responses field the client sent. */
export function inResponsesTerms(e: unknown): unknown {
  if (!isGatewayError(e) || !e.param) return e;
  const hit = RESPONSES_NAMES.find(([re]) => re.test(e.param as string));
  if (!hit) return e;
  const chatName = (e.param.match(hit[0]) as RegExpMatchArray)[0];
  const param = hit[1] + e.param.slice(chatName.length);
  return new GatewayError({
    status: e.status,
    type: e.type,
    code: e.code,
    param,
    message: e.message.split(chatName).join(hit[1]),
    retryable: e.retryable,
    retryAfter: e.retryAfter,
    details: e.details,
  });
}
