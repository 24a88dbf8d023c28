import { errors, GatewayError, isGatewayError } from '../../errors';
import { randomId } from '../../ids';
import type { ChatMessage, ContentPart, FunctionTool, ToolChoice } from '../../types/openai';
import type {
  FunctionToolDef,
  InputContent,
  InputItem,
  OutputItem,
  ResponsesToolChoice,
  TextFormat,
} from '../../types/responses';
import { combine, GATEWAY_FIELDS } from '../chat-request';

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Fields of a Responses request that map onto the chat request (or are the gateway's own). */
const MAPPED = new Set<string>([
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
  'metadata',
  'user',
  'store',
  'previous_response_id',
  'stream',
  'top_logprobs',
  'service_tier',
  'include',
  'truncation',
  'background',
  'safety_identifier',
  'prompt_cache_key',
  'stream_options',
  ...GATEWAY_FIELDS,
]);

/** A Responses input part as a chat content part. */
function part(p: InputContent, at: string): ContentPart {
  if (p.type === 'input_text' || p.type === 'output_text') return { type: 'text', text: p.text };
  if (p.type === 'refusal') return { type: 'text', text: p.refusal };
  if (p.type === 'input_image' && typeof p.image_url === 'string')
    return { type: 'image_url', image_url: { url: p.image_url, ...(p.detail ? { detail: p.detail } : {}) } };
  throw errors.invalidRequest(
    `${at}: content parts of type '${String((p as { type?: unknown }).type)}' are not supported here ` +
      '(input_text, input_image with image_url, output_text)',
    at,
    'unsupported_content',
  );
}

function textOf(content: string | InputContent[], at: string): string {
  if (typeof content === 'string') return content;
  return content
    .map((p, k) => {
      const c = part(p, `${at}[${k}]`);
      return c.type === 'text' ? String(c.text) : '';
    })
    .join('');
}

/** The conversation's items as chat messages: consecutive function calls become one assistant message's tool calls. */
export function itemsToMessages(items: InputItem[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  items.forEach((item, i) => {
    const at = `input[${i}]`;
    if (!isRecord(item)) throw errors.invalidRequest(`${at} must be an object`, at, 'invalid_type');
    const type = item.type ?? 'message';
    if (type === 'message') {
      const m = item as Extract<InputItem, { role: string }>;
      if (!['user', 'system', 'developer', 'assistant'].includes(m.role))
        throw errors.invalidRequest(
          `${at}.role must be user, system, developer or assistant`,
          `${at}.role`,
          'invalid_value',
        );
      if (typeof m.content !== 'string' && !Array.isArray(m.content))
        throw errors.invalidRequest(
          `${at}.content must be a string or a list of parts`,
          `${at}.content`,
          'invalid_type',
        );
      const content =
        m.role === 'user' && Array.isArray(m.content)
          ? m.content.map((p, k) => part(p, `${at}.content[${k}]`))
          : textOf(m.content, `${at}.content`);
      out.push({ role: m.role, content });
    } else if (type === 'function_call') {
      const f = item as Extract<InputItem, { type: 'function_call' }>;
      if (typeof f.call_id !== 'string' || typeof f.name !== 'string' || typeof f.arguments !== 'string') {
        throw errors.invalidRequest(`${at} needs call_id, name and arguments (strings)`, at, 'invalid_type');
      }
      const call = { id: f.call_id, type: 'function' as const, function: { name: f.name, arguments: f.arguments } };
      const last = out[out.length - 1];
      if (last?.role === 'assistant' && (last.tool_calls || last.content !== null)) (last.tool_calls ??= []).push(call);
      else out.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (type === 'function_call_output') {
      const o = item as Extract<InputItem, { type: 'function_call_output' }>;
      if (typeof o.call_id !== 'string')
        throw errors.invalidRequest(`${at}.call_id is required`, `${at}.call_id`, 'missing_field');
      if (typeof o.output !== 'string' && !Array.isArray(o.output))
        throw errors.invalidRequest(`${at}.output must be a string or a list of parts`, `${at}.output`, 'invalid_type');
      out.push({ role: 'tool', tool_call_id: o.call_id, content: textOf(o.output, `${at}.output`) });
    } else if (type !== 'reasoning') {
      throw errors.invalidRequest(
        `${at}: items of type '${String(type)}' are not supported ` +
          '(message, function_call, function_call_output, reasoning)',
        `${at}.type`,
        'unsupported_item',
      );
    }
  });
  return out;
}

/** A response's output items as input items of the next turn. */
export function outputAsInput(output: OutputItem[]): InputItem[] {
  return output.flatMap((o): InputItem[] => {
    if (o.type === 'message')
      return [
        {
          type: 'message',
          id: o.id,
          role: 'assistant',
          content: o.content.map((c) => (c.type === 'output_text' ? { type: 'output_text', text: c.text } : c)),
        },
      ];
    if (o.type === 'function_call')
      return [{ type: 'function_call', id: o.id, call_id: o.call_id, name: o.name, arguments: o.arguments }];
    return [];
  });
}

/** `input` as items, each with an id (so GET .../input_items can list them). */
export function inputItems(input: unknown): InputItem[] {
  if (typeof input === 'string') return [{ type: 'message', id: randomId('msg_'), role: 'user', content: input }];
  if (!Array.isArray(input))
    throw errors.invalidRequest('input must be a string or a list of input items', 'input', 'invalid_type');
  const prefix: Record<string, string> = { function_call: 'fc_', function_call_output: 'fco_', reasoning: 'rs_' };
  return input.map((item: unknown) =>
    isRecord(item)
      ? ({ id: randomId(prefix[String(item.type)] ?? 'msg_'), ...item } as InputItem)
      : (item as InputItem),
  );
}

function tool(t: FunctionToolDef, i: number): FunctionTool {
  if (!isRecord(t) || t.type !== 'function' || typeof t.name !== 'string') {
    throw errors.invalidRequest(
      `tools[${i}]: only function tools ({type: function, name, parameters}) are supported`,
      `tools[${i}]`,
      'unsupported_tool',
    );
  }
  const fn: FunctionTool['function'] = { name: t.name };
  if (typeof t.description === 'string') fn.description = t.description;
  if (isRecord(t.parameters)) fn.parameters = t.parameters;
  if (typeof t.strict === 'boolean') fn.strict = t.strict;
  return { type: 'function', function: fn };
}

function toolChoice(c: ResponsesToolChoice): ToolChoice {
  if (typeof c === 'string') return c;
  if (isRecord(c) && c.type === 'function' && typeof c.name === 'string')
    return { type: 'function', function: { name: c.name } };
  throw errors.invalidRequest(
    'tool_choice must be none, auto, required or {type: function, name}',
    'tool_choice',
    'invalid_value',
  );
}

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

/**
 * A Responses request as the chat body the chain runs: instructions -> system message,
 * the conversation (earlier turns, then `input`) -> messages, function tools,
 * text.format -> response_format, max_output_tokens -> max_tokens, reasoning.effort ->
 * reasoning_effort. Gateway fields (timeout, metadata, store, fallbacks...) pass as they are.
 */
export function toChatBody(body: Record<string, unknown>, items: InputItem[]): Record<string, unknown> {
  const problems: GatewayError[] = [];
  for (const k of Object.keys(body))
    if (!MAPPED.has(k))
      problems.push(errors.invalidRequest(`${k} is not supported by /v1/responses`, k, 'unsupported_parameter'));
  if (body.background === true)
    problems.push(
      errors.invalidRequest('background responses are not supported', 'background', 'unsupported_parameter'),
    );
  if (body.instructions !== undefined && body.instructions !== null && typeof body.instructions !== 'string')
    problems.push(errors.invalidRequest('instructions must be a string', 'instructions', 'invalid_type'));
  if (body.tools !== undefined && !Array.isArray(body.tools))
    problems.push(errors.invalidRequest('tools must be a list', 'tools', 'invalid_type'));
  if (problems.length > 0) throw combine(problems);

  const messages: ChatMessage[] =
    typeof body.instructions === 'string' ? [{ role: 'system', content: body.instructions }] : [];
  messages.push(...itemsToMessages(items));
  const chat: Record<string, unknown> = { model: body.model, messages };
  for (const k of ['temperature', 'top_p', 'user', 'stream', 'service_tier', ...GATEWAY_FIELDS])
    if (body[k] !== undefined) chat[k] = body[k];
  // Responses accepts tool_choice and parallel_tool_calls without tools; chat does not.
  if (Array.isArray(body.tools) && body.tools.length > 0) {
    chat.tools = (body.tools as FunctionToolDef[]).map(tool);
    if (body.tool_choice !== undefined) chat.tool_choice = toolChoice(body.tool_choice as ResponsesToolChoice);
    if (body.parallel_tool_calls !== undefined) chat.parallel_tool_calls = body.parallel_tool_calls;
  }
  if (body.max_output_tokens !== undefined && body.max_output_tokens !== null) chat.max_tokens = body.max_output_tokens;
  if (typeof body.top_logprobs === 'number') Object.assign(chat, { logprobs: true, top_logprobs: body.top_logprobs });
  const text = isRecord(body.text) ? body.text : {};
  const format = text.format === undefined ? undefined : responseFormat(text.format as TextFormat);
  if (format) chat.response_format = format;
  if (text.verbosity !== undefined) chat.verbosity = text.verbosity;
  const effort = isRecord(body.reasoning) ? body.reasoning.effort : undefined;
  if (effort !== undefined && effort !== null) chat.reasoning_effort = effort;
  return chat;
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
