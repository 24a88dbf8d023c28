import type { ChatMessage, ChatRequest, ContentPart } from '../../types/openai';
import { dataUrl, mergeConsecutive, parseArgs, textOf } from '../shared';
import { postJson, targetOptions } from '../shared/http';
import { applyParams } from '../shared/params';
import { forcedTool, imageUrl, isSystem, responseSchema, toolHead, toolParameters } from '../shared/request';
import { cacheControlOf, detailsOf, reasoningAsk, thinkingMaxTokens, thinkingBudget } from '../reasoning';
import type { UpstreamRequest, UpstreamTarget } from '../types';
import { ANTHROPIC_TABLE } from './params';

/** The tool that carries a JSON-schema answer (Anthropic has no response_format): its input becomes the text. */
export const JSON_TOOL = 'json_output';

type Block = Record<string, unknown>;

const withCache = (b: Block, cache: Record<string, unknown> | undefined): Block =>
  cache ? { ...b, cache_control: cache } : b;

/** A content part as an Anthropic block (text or image), or nothing for parts it does not take. */
function block(p: ContentPart): Block[] {
  if (p.type === 'text') return [withCache({ type: 'text', text: String(p.text) }, cacheControlOf(p))];
  if (p.type !== 'image_url') return [];
  const url = imageUrl(p);
  const d = dataUrl(url);
  const source = d ? { type: 'base64', media_type: d.mediaType, data: d.data } : { type: 'url', url };
  return [withCache({ type: 'image', source }, cacheControlOf(p))];
}

/** Content parts -> Anthropic blocks; a part's `cache_control` stays on its block, a message's goes on its last. */
function blocks(content: string | ContentPart[] | null, messageCache?: Record<string, unknown>): Block[] {
  let out: Block[];
  if (typeof content === 'string') out = content ? [{ type: 'text', text: content }] : [];
  else out = Array.isArray(content) ? content.flatMap(block) : [];
  if (messageCache && out.length > 0) out[out.length - 1] = { ...out[out.length - 1], cache_control: messageCache };
  return out;
}

/** Thinking blocks of an earlier turn, from its reasoning_details (they must come first, signatures unchanged). */
function thinkingBlocks(m: ChatMessage): Block[] {
  return detailsOf(m).flatMap((d): Block[] => {
    if (d.format !== undefined && !d.format.startsWith('anthropic')) return [];
    if (d.type === 'reasoning.text' && typeof d.signature === 'string') {
      return [{ type: 'thinking', thinking: d.text ?? '', signature: d.signature }];
    }
    if (d.type === 'reasoning.encrypted' && typeof d.data === 'string')
      return [{ type: 'redacted_thinking', data: d.data }];
    return [];
  });
}

const toolUse = (id: string, name: string, args: string): Block => ({
  type: 'tool_use',
  id,
  name,
  input: parseArgs(args),
});

function message(m: ChatMessage): { role: 'user' | 'assistant'; content: Block[] } {
  const cache = cacheControlOf(m);
  if (m.role === 'assistant') {
    const calls = (m.tool_calls ?? []).map((t) => toolUse(t.id, t.function.name, t.function.arguments));
    const fc = m.function_call ? [toolUse(m.function_call.name, m.function_call.name, m.function_call.arguments)] : [];
    return { role: 'assistant', content: [...thinkingBlocks(m), ...blocks(m.content, cache), ...calls, ...fc] };
  }
  if (m.role === 'tool' || m.role === 'function') {
    const result = { type: 'tool_result', tool_use_id: m.tool_call_id ?? m.name ?? '', content: textOf(m.content) };
    return { role: 'user', content: [withCache(result, cache)] };
  }
  return { role: 'user', content: blocks(m.content, cache) };
}

/** System and developer messages: one string, or text blocks when any of them asks for caching. */
function systemOf(req: ChatRequest): string | Block[] {
  const sys = req.messages.filter(isSystem);
  const partCached = (m: ChatMessage) => Array.isArray(m.content) && m.content.some((p) => cacheControlOf(p));
  if (!sys.some((m) => cacheControlOf(m) || partCached(m))) return sys.map((m) => textOf(m.content)).join('\n\n');
  return sys.flatMap((m) => blocks(m.content, cacheControlOf(m)).filter((b) => b.type === 'text'));
}

/** OpenAI's tool_choice strings -> Anthropic's; a forced function is `{type: tool, name}`. */
const TOOL_CHOICE: Record<string, Block> = {
  none: { type: 'none' },
  required: { type: 'any' },
  auto: { type: 'auto' },
};

function toolChoiceOf(req: ChatRequest): Block | undefined {
  const forced = forcedTool(req);
  if (forced !== undefined) return { type: 'tool', name: forced };
  const choice = req.tool_choice;
  return typeof choice === 'string' && Object.hasOwn(TOOL_CHOICE, choice) ? TOOL_CHOICE[choice] : undefined;
}

/** reasoning_effort / reasoning -> extended thinking; Anthropic then refuses temperature, top_k and a forced tool. */
function applyThinking(req: ChatRequest, body: Record<string, unknown>): void {
  const ask = reasoningAsk(req);
  if (!ask) return;
  if (!ask.enabled) {
    body.thinking = { type: 'disabled' };
    return;
  }
  const max = Number(body.max_tokens);
  const budget = thinkingBudget(ask, max);
  body.max_tokens = thinkingMaxTokens(max, budget);
  body.thinking = { type: 'enabled', budget_tokens: budget };
  delete body.temperature;
  delete body.top_k;
  if (typeof body.top_p === 'number' && body.top_p < 0.95) delete body.top_p;
  const tc = body.tool_choice as Block | undefined;
  if (tc && (tc.type === 'any' || tc.type === 'tool')) body.tool_choice = { ...tc, type: 'auto', name: undefined };
}

/** OpenAI chat request -> Anthropic Messages request. */
export function anthropicBody(req: ChatRequest, target: UpstreamTarget, stream: boolean): Record<string, unknown> {
  const system = systemOf(req);
  const messages = mergeConsecutive(req.messages.filter((m) => !isSystem(m)).map(message));
  const max = Number(targetOptions(target).max_tokens ?? 4096);
  const body: Record<string, unknown> = { model: target.deployment.model, max_tokens: max, messages };
  if (system.length > 0) body.system = system;
  if (stream) body.stream = true;
  applyParams(req, ANTHROPIC_TABLE, body);
  const tools: Block[] = (req.tools ?? []).map((t) =>
    withCache({ ...toolHead(t), input_schema: toolParameters(t) }, cacheControlOf(t)),
  );
  let choice = toolChoiceOf(req);
  const schema = responseSchema(req);
  if (req.response_format?.type === 'json_schema' && req.response_format.json_schema) {
    // JSON schema answers: a forced tool whose input is the answer.
    const input_schema = schema ?? { type: 'object' };
    tools.push({ name: JSON_TOOL, description: 'Give the answer as JSON', input_schema });
    choice = { type: 'tool', name: JSON_TOOL };
  } else if (req.response_format?.type === 'json_object') {
    const ask = 'Answer with one valid JSON object and nothing else.';
    body.system =
      typeof system === 'string' ? `${system ? `${system}\n\n` : ''}${ask}` : [...system, { type: 'text', text: ask }];
  }
  if (req.parallel_tool_calls === false && tools.length > 0) {
    choice = { ...(choice ?? { type: 'auto' }), disable_parallel_tool_use: true };
  }
  if (tools.length > 0) body.tools = tools;
  if (choice && tools.length > 0) body.tool_choice = choice;
  applyThinking(req, body);
  return body;
}

export function buildAnthropicRequest(req: ChatRequest, target: UpstreamTarget, stream: boolean): UpstreamRequest {
  const version = String(target.provider.options?.anthropic_version ?? '2023-06-01');
  const auth = { 'x-api-key': target.provider.api_key ?? '', 'anthropic-version': version };
  return postJson(target, 'https://api.anthropic.com', '/v1/messages', auth, anthropicBody(req, target, stream));
}
