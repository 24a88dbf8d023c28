import { errors, type GatewayError } from '../../errors';
import { combine, GATEWAY_FIELDS } from '../chat-request';
import type {
  ChatMessage,
  ChatRequest,
  ContentPart,
  FunctionTool,
  ReasoningDetail,
  ToolChoice,
} from '../../types/openai';

/** Anthropic's thinking format name, as the Anthropic adapter marks reasoning details it can send back. */
export const ANTHROPIC_FORMAT = 'anthropic-claude-v1';

type Json = Record<string, unknown>;

/** The version a request without `anthropic-version` is read under (the API's first, which every SDK still accepts). */
export const LEGACY_VERSION = '2023-06-01';
/** From this version on (the current SDK's), the API refuses temperature, top_p and top_k; so does the gateway. */
export const SAMPLING_REMOVED = '2026-10-21';
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Fields of a Messages request this translation reads; every other one is dropped and named (X-Gateway-Dropped). */
const READ = new Set([
  'model',
  'messages',
  'system',
  'max_tokens',
  'stream',
  'temperature',
  'top_p',
  'top_k',
  'stop_sequences',
  'tools',
  'tool_choice',
  'thinking',
  'metadata',
]);

/** The gateway's request fields as /v1/messages takes them: all of chat's but `metadata`, which is Anthropic's. */
export const MESSAGES_GATEWAY_FIELDS: ReadonlySet<string> = new Set(GATEWAY_FIELDS.filter((f) => f !== 'metadata'));

/** A Messages request translated: the chat body the chain takes, and what the translation could not carry. */
export interface TranslatedMessages {
  chat: Json;
  dropped: string[];
}

function cacheOf(b: Json): Json {
  return isObj(b.cache_control) ? { cache_control: b.cache_control } : {};
}

/** An Anthropic image or document source as an OpenAI content part (base64 becomes a data URL). */
function sourcePart(b: Json, path: string): ContentPart {
  const src = isObj(b.source) ? b.source : undefined;
  if (src?.type === 'base64' && typeof src.data === 'string' && typeof src.media_type === 'string') {
    const url = `data:${src.media_type};base64,${src.data}`;
    return b.type === 'image'
      ? { type: 'image_url', image_url: { url }, ...cacheOf(b) }
      : { type: 'file', file: { file_data: url, filename: typeof b.title === 'string' ? b.title : 'document' } };
  }
  if (src?.type === 'url' && typeof src.url === 'string' && b.type === 'image')
    return { type: 'image_url', image_url: { url: src.url }, ...cacheOf(b) };
  if (src?.type === 'text' && typeof src.data === 'string') return { type: 'text', text: src.data, ...cacheOf(b) };
  throw errors.invalidRequest(
    `${path}.source is not a source this gateway can send`,
    `${path}.source`,
    'invalid_value',
  );
}

/** tool_result content (a string or text/image blocks) as the tool message's content. */
function toolResultContent(c: unknown, path: string): string | ContentPart[] {
  if (typeof c === 'string' || c === undefined) return c ?? '';
  if (!Array.isArray(c)) throw errors.invalidRequest(`${path} must be a string or blocks`, path, 'invalid_type');
  return c.map((b, i) => userPart(b, `${path}[${i}]`));
}

function userPart(b: unknown, path: string): ContentPart {
  if (!isObj(b)) throw errors.invalidRequest(`${path} must be a content block`, path, 'invalid_type');
  if (b.type === 'text') return { type: 'text', text: String(b.text ?? ''), ...cacheOf(b) };
  if (b.type === 'image' || b.type === 'document') return sourcePart(b, path);
  throw errors.invalidRequest(
    `${path}: a '${String(b.type)}' block cannot be sent here`,
    `${path}.type`,
    'invalid_value',
  );
}

/** A user turn: its text and images as one message, each tool_result as a tool message (before them, as sent). */
function userTurn(content: unknown, path: string): ChatMessage[] {
  if (typeof content === 'string') return [{ role: 'user', content }];
  if (!Array.isArray(content)) throw errors.invalidRequest(`${path} must be a string or blocks`, path, 'invalid_type');
  const out: ChatMessage[] = [];
  const parts: ContentPart[] = [];
  content.forEach((b: unknown, i) => {
    const p = `${path}[${i}]`;
    if (isObj(b) && b.type === 'tool_result') {
      const text = toolResultContent(b.content, `${p}.content`);
      const body = b.is_error === true && typeof text === 'string' ? `Error: ${text}` : text;
      out.push({ role: 'tool', tool_call_id: String(b.tool_use_id ?? ''), content: body });
    } else parts.push(userPart(b, p));
  });
  if (parts.length > 0) out.push({ role: 'user', content: parts });
  return out;
}

/** An assistant turn: text, tool calls, and thinking kept as reasoning details (with signatures) to send back. */
function assistantTurn(content: unknown, path: string): ChatMessage {
  if (typeof content === 'string') return { role: 'assistant', content };
  if (!Array.isArray(content)) throw errors.invalidRequest(`${path} must be a string or blocks`, path, 'invalid_type');
  const text: string[] = [];
  const calls: NonNullable<ChatMessage['tool_calls']> = [];
  const details: ReasoningDetail[] = [];
  for (const b of content as unknown[]) {
    if (!isObj(b)) continue;
    if (b.type === 'text') text.push(String(b.text ?? ''));
    else if (b.type === 'tool_use')
      calls.push({
        id: String(b.id ?? ''),
        type: 'function',
        function: { name: String(b.name ?? ''), arguments: JSON.stringify(b.input ?? {}) },
      });
    else if (b.type === 'thinking')
      details.push({
        type: 'reasoning.text',
        text: String(b.thinking ?? ''),
        signature: typeof b.signature === 'string' ? b.signature : null,
        format: ANTHROPIC_FORMAT,
        index: details.length,
      });
    else if (b.type === 'redacted_thinking')
      details.push({
        type: 'reasoning.encrypted',
        data: String(b.data ?? ''),
        format: ANTHROPIC_FORMAT,
        index: details.length,
      });
  }
  const m: ChatMessage = { role: 'assistant', content: text.length > 0 ? text.join('') : null };
  if (calls.length > 0) m.tool_calls = calls;
  if (details.length > 0) m.reasoning_details = details;
  return m;
}

/** `system`: a string or text blocks (their cache_control kept on their parts). */
function systemMessage(system: unknown): ChatMessage[] {
  if (system === undefined || system === null) return [];
  if (typeof system === 'string') return [{ role: 'system', content: system }];
  if (!Array.isArray(system))
    throw errors.invalidRequest('system must be a string or text blocks', 'system', 'invalid_type');
  return [{ role: 'system', content: system.map((b, i) => userPart(b, `system[${i}]`)) }];
}

function messagesOf(list: unknown): ChatMessage[] {
  if (!Array.isArray(list) || list.length === 0)
    throw errors.invalidRequest('messages must be a non-empty array', 'messages', 'invalid_messages');
  const out: ChatMessage[] = [];
  list.forEach((m: unknown, i) => {
    const path = `messages[${i}]`;
    if (!isObj(m)) throw errors.invalidRequest(`${path} must be an object`, path, 'invalid_type');
    if (m.role === 'user') out.push(...userTurn(m.content, `${path}.content`));
    else if (m.role === 'assistant') out.push(assistantTurn(m.content, `${path}.content`));
    // Claude Code sends system-role messages after a user turn: kept where they stand.
    else if (m.role === 'system') out.push(...systemMessage(m.content));
    else throw errors.invalidRequest(`${path}.role must be user or assistant`, `${path}.role`, 'invalid_value');
  });
  return out;
}

/** Custom (client) tools as functions; server tools the gateway cannot run are dropped and named. */
function toolsOf(tools: unknown, dropped: string[]): FunctionTool[] | undefined {
  if (tools === undefined) return undefined;
  if (!Array.isArray(tools)) throw errors.invalidRequest('tools must be an array', 'tools', 'invalid_type');
  const out: FunctionTool[] = [];
  tools.forEach((t: unknown, i) => {
    if (!isObj(t) || typeof t.name !== 'string')
      throw errors.invalidRequest(`tools[${i}] must be a tool with a name`, `tools[${i}]`, 'invalid_type');
    if (t.type !== undefined && t.type !== 'custom') {
      dropped.push(`tools[${i}] (${String(t.type)})`);
      return;
    }
    const fn: FunctionTool['function'] = { name: t.name };
    if (typeof t.description === 'string') fn.description = t.description;
    if (isObj(t.input_schema)) fn.parameters = t.input_schema;
    out.push({ type: 'function', function: fn });
  });
  return out.length > 0 ? out : undefined;
}

function toolChoiceOf(c: unknown): { choice?: ToolChoice; parallel?: boolean } {
  if (!isObj(c)) return {};
  const parallel = c.disable_parallel_tool_use === true ? false : undefined;
  if (c.type === 'auto') return { choice: 'auto', parallel };
  if (c.type === 'any') return { choice: 'required', parallel };
  if (c.type === 'none') return { choice: 'none' };
  if (c.type === 'tool' && typeof c.name === 'string')
    return { choice: { type: 'function', function: { name: c.name } }, parallel };
  throw errors.invalidRequest('tool_choice.type must be auto, any, tool or none', 'tool_choice.type', 'invalid_value');
}

/** `thinking`: enabled with a budget, adaptive, or disabled, as the gateway's reasoning request. */
function reasoningOf(t: unknown): ChatRequest['reasoning'] | undefined {
  if (!isObj(t)) return undefined;
  if (t.type === 'disabled') return { enabled: false };
  if (t.type === 'enabled' && typeof t.budget_tokens === 'number') return { max_tokens: t.budget_tokens };
  if (t.type === 'adaptive' || t.type === 'enabled') return { enabled: true };
  return undefined;
}

/**
 * An Anthropic Messages request as the gateway's chat request (for providers other than Anthropic): system,
 * messages (text, images, documents, tool use and results, thinking with its signature), tools and tool_choice,
 * stop_sequences, sampling, max_tokens, thinking, metadata.user_id. Problems are one 400 listing them all.
 */
export function translateMessagesRequest(body: Json, version = LEGACY_VERSION): TranslatedMessages {
  const problems: GatewayError[] = [];
  if (version >= SAMPLING_REMOVED)
    for (const k of ['temperature', 'top_p', 'top_k'])
      if (body[k] !== undefined)
        problems.push(
          errors.invalidRequest(
            `${k} is not accepted under anthropic-version ${version.slice(0, 32)}`,
            k,
            'unsupported_parameter',
          ),
        );
  const dropped = Object.keys(body).filter((k) => !READ.has(k) && !MESSAGES_GATEWAY_FIELDS.has(k));
  const chat: Json = {};
  const attempt = (f: () => void) => {
    try {
      f();
    } catch (e) {
      problems.push(e as GatewayError);
    }
  };
  if (typeof body.model !== 'string' || body.model.length === 0)
    problems.push(errors.invalidRequest('model is required', 'model', 'invalid_model'));
  if (typeof body.max_tokens !== 'number' || !Number.isInteger(body.max_tokens) || body.max_tokens < 1)
    problems.push(errors.invalidRequest('max_tokens is required: a positive integer', 'max_tokens', 'invalid_value'));
  chat.model = body.model;
  chat.max_tokens = body.max_tokens;
  attempt(() => (chat.messages = [...systemMessage(body.system), ...messagesOf(body.messages)]));
  if (body.stream !== undefined) chat.stream = body.stream;
  if (body.stream === true) chat.stream_options = { include_usage: true };
  for (const k of ['temperature', 'top_p', 'top_k'] as const) if (body[k] !== undefined) chat[k] = body[k];
  if (body.stop_sequences !== undefined) chat.stop = body.stop_sequences;
  attempt(() => {
    const tools = toolsOf(body.tools, dropped);
    if (tools) chat.tools = tools;
  });
  attempt(() => {
    const { choice, parallel } = toolChoiceOf(body.tool_choice);
    if (choice !== undefined) chat.tool_choice = choice;
    if (parallel !== undefined) chat.parallel_tool_calls = parallel;
  });
  const reasoning = reasoningOf(body.thinking);
  if (reasoning) chat.reasoning = reasoning;
  // The gateway's own fields (fallbacks, models, timeout, ...) work here as on chat; `metadata` is Anthropic's.
  for (const k of MESSAGES_GATEWAY_FIELDS) if (body[k] !== undefined) chat[k] = body[k];
  const user = isObj(body.metadata) ? body.metadata.user_id : undefined;
  if (typeof user === 'string') chat.user = user;
  if (problems.length > 0) throw combine(problems);
  return { chat, dropped };
}
