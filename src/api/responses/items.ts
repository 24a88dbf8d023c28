/**
 * @module
 * A Responses request's input items as chat messages, and a response's output as the next turn's input items.
 */
import { errors } from '../../errors';
import { randomId } from '../../ids';
import type { ChatMessage, ContentPart, ReasoningDetail } from '../../types/openai';
import type { InputContent, InputItem, OutputItem } from '../../types/responses';
import { decodeDetails } from './reasoning';
import { CUSTOM_INPUT, modelName, NO_TOOLS, type ToolMap } from './tools';

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Input item types from hosted tools the gateway does not run: skipped (and named), never a 400. */
const HOSTED_ITEMS = new Set([
  'web_search_call',
  'file_search_call',
  'code_interpreter_call',
  'image_generation_call',
  'computer_call',
  'computer_call_output',
  'tool_search_call',
  'tool_search_output',
  'local_shell_call',
  'local_shell_call_output',
  'mcp_list_tools',
  'mcp_call',
  'mcp_approval_request',
  'mcp_approval_response',
]);

/** A Responses input part as a chat content part. */
function part(p: InputContent, at: string): ContentPart {
  if (p.type === 'input_text' || p.type === 'output_text') return { type: 'text', text: p.text };
  if (p.type === 'refusal') return { type: 'text', text: p.refusal };
  if (p.type === 'input_image' && typeof p.image_url === 'string') {
    // OpenAI's `original` (and any newer) detail has no chat equivalent: the provider's default applies.
    const detail = p.detail === 'auto' || p.detail === 'low' || p.detail === 'high' ? { detail: p.detail } : {};
    return { type: 'image_url', image_url: { url: p.image_url, ...detail } };
  }
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

/** What itemsToMessages needs besides the items: the tools' model names, and where to name what it skips. */
export interface ItemContext {
  tools: ToolMap;
  dropped: string[];
}

/**
 * The chat messages of a conversation as its items come. One assistant turn is a run of assistant-side items
 * (reasoning, assistant messages, function and custom tool calls): it becomes one assistant message, its calls as
 * tool_calls and its reasoning items' encrypted_content as reasoning_details (thinking signatures go back to the
 * provider).
 */
class Turns {
  readonly out: ChatMessage[] = [];
  /** The assistant message of the current run of assistant-side items, and reasoning waiting for one. */
  private turn: ChatMessage | null = null;
  private pending: ReasoningDetail[] = [];

  /** The current run's assistant message (made when there is none), with the reasoning that waited for it. */
  assistant(): ChatMessage {
    if (!this.turn) {
      this.turn = { role: 'assistant', content: null };
      this.out.push(this.turn);
    }
    if (this.pending.length > 0) {
      this.turn.reasoning_details = [...(this.turn.reasoning_details ?? []), ...this.pending];
      this.pending = [];
    }
    return this.turn;
  }

  assistantText(text: string): void {
    const t = this.assistant();
    // Text after the turn's calls starts a new assistant message (chat puts calls last).
    if (t.tool_calls) {
      this.turn = null;
      this.assistant().content = text;
    } else t.content = typeof t.content === 'string' ? t.content + text : text;
  }

  call(id: string, name: string, args: string): void {
    const m = this.assistant();
    (m.tool_calls ??= []).push({ id, type: 'function', function: { name, arguments: args } });
  }

  /** A user-side message (user, system, developer, a tool's output) ends the assistant's run. */
  userSide(m: ChatMessage): void {
    this.turn = null;
    this.out.push(m);
  }

  reasoning(details: ReasoningDetail[]): void {
    if (details.length === 0) return;
    if (this.turn) this.turn.reasoning_details = [...(this.turn.reasoning_details ?? []), ...details];
    else this.pending.push(...details);
  }
}

function messageItem(turns: Turns, m: Extract<InputItem, { role: string }>, at: string): void {
  if (!['user', 'system', 'developer', 'assistant'].includes(m.role))
    throw errors.invalidRequest(
      `${at}.role must be user, system, developer or assistant`,
      `${at}.role`,
      'invalid_value',
    );
  if (typeof m.content !== 'string' && !Array.isArray(m.content))
    throw errors.invalidRequest(`${at}.content must be a string or a list of parts`, `${at}.content`, 'invalid_type');
  if (m.role === 'assistant') {
    turns.assistantText(textOf(m.content, `${at}.content`));
    return;
  }
  const content =
    m.role === 'user' && Array.isArray(m.content)
      ? m.content.map((p, k) => part(p, `${at}.content[${k}]`))
      : textOf(m.content, `${at}.content`);
  turns.userSide({ role: m.role, content });
}

function functionCallItem(turns: Turns, f: Extract<InputItem, { type: 'function_call' }>, at: string, tools: ToolMap) {
  if (typeof f.call_id !== 'string' || typeof f.name !== 'string' || typeof f.arguments !== 'string') {
    throw errors.invalidRequest(`${at} needs call_id, name and arguments (strings)`, at, 'invalid_type');
  }
  turns.call(f.call_id, modelName(tools, f.name, f.namespace), f.arguments);
}

function customCallItem(turns: Turns, f: Extract<InputItem, { type: 'custom_tool_call' }>, at: string, tools: ToolMap) {
  if (typeof f.call_id !== 'string' || typeof f.name !== 'string' || typeof f.input !== 'string')
    throw errors.invalidRequest(`${at} needs call_id, name and input (strings)`, at, 'invalid_type');
  turns.call(f.call_id, modelName(tools, f.name, f.namespace), JSON.stringify({ [CUSTOM_INPUT]: f.input }));
}

function callOutputItem(
  turns: Turns,
  o: Extract<InputItem, { type: 'function_call_output' | 'custom_tool_call_output' }>,
  at: string,
): void {
  if (typeof o.call_id !== 'string')
    throw errors.invalidRequest(`${at}.call_id is required`, `${at}.call_id`, 'missing_field');
  if (typeof o.output !== 'string' && !Array.isArray(o.output))
    throw errors.invalidRequest(`${at}.output must be a string or a list of parts`, `${at}.output`, 'invalid_type');
  turns.userSide({ role: 'tool', tool_call_id: o.call_id, content: textOf(o.output, `${at}.output`) });
}

/** The conversation's items as chat messages (see Turns for how an assistant turn is gathered). */
export function itemsToMessages(items: InputItem[], cx: ItemContext = { tools: NO_TOOLS, dropped: [] }): ChatMessage[] {
  const turns = new Turns();
  items.forEach((item, i) => {
    const at = `input[${i}]`;
    if (!isRecord(item)) throw errors.invalidRequest(`${at} must be an object`, at, 'invalid_type');
    const type = item.type ?? 'message';
    if (type === 'message') messageItem(turns, item as Extract<InputItem, { role: string }>, at);
    else if (type === 'function_call')
      functionCallItem(turns, item as Extract<InputItem, { type: 'function_call' }>, at, cx.tools);
    else if (type === 'custom_tool_call')
      customCallItem(turns, item as Extract<InputItem, { type: 'custom_tool_call' }>, at, cx.tools);
    else if (type === 'function_call_output' || type === 'custom_tool_call_output')
      callOutputItem(
        turns,
        item as Extract<InputItem, { type: 'function_call_output' | 'custom_tool_call_output' }>,
        at,
      );
    else if (type === 'reasoning')
      turns.reasoning(decodeDetails((item as { encrypted_content?: unknown }).encrypted_content));
    else if (HOSTED_ITEMS.has(String(type))) {
      if (!cx.dropped.includes(`input[${String(type)}]`)) cx.dropped.push(`input[${String(type)}]`);
    } else {
      throw errors.invalidRequest(
        `${at}: items of type '${String(type)}' are not supported ` +
          '(message, function_call, function_call_output, custom_tool_call, custom_tool_call_output, reasoning)',
        `${at}.type`,
        'unsupported_item',
      );
    }
  });
  return turns.out;
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
      return [
        {
          type: 'function_call',
          id: o.id,
          call_id: o.call_id,
          name: o.name,
          ...(o.namespace ? { namespace: o.namespace } : {}),
          arguments: o.arguments,
        },
      ];
    if (o.type === 'custom_tool_call')
      return [
        {
          type: 'custom_tool_call',
          id: o.id,
          call_id: o.call_id,
          name: o.name,
          ...(o.namespace ? { namespace: o.namespace } : {}),
          input: o.input,
        },
      ];
    if (o.type === 'reasoning' && o.encrypted_content)
      return [{ type: 'reasoning', id: o.id, summary: o.summary, encrypted_content: o.encrypted_content }];
    return [];
  });
}

/** `input` as items, each with an id (so GET .../input_items can list them). */
export function inputItems(input: unknown): InputItem[] {
  if (typeof input === 'string') return [{ type: 'message', id: randomId('msg_'), role: 'user', content: input }];
  if (!Array.isArray(input))
    throw errors.invalidRequest('input must be a string or a list of input items', 'input', 'invalid_type');
  const prefix: Record<string, string> = {
    function_call: 'fc_',
    function_call_output: 'fco_',
    custom_tool_call: 'ctc_',
    custom_tool_call_output: 'ctco_',
    reasoning: 'rs_',
  };
  return input.map((item: unknown) =>
    isRecord(item)
      ? ({ id: randomId(prefix[String(item.type)] ?? 'msg_'), ...item } as InputItem)
      : (item as InputItem),
  );
}
