import type { ChatMessage, ChatRequest, ContentPart } from '../../types/openai';
import { joinUrl, upstreamHeaders } from '../shared/http';
import { dataUrl, mergeConsecutive, parseArgs, textOf } from '../shared';
import { cacheControlOf, detailsOf, reasoningAsk, thinkingBudget } from '../reasoning';
import type { UpstreamRequest, UpstreamTarget } from '../types';

/** The tool that carries a JSON-schema answer (Anthropic has no response_format): its input becomes the text. */
export const JSON_TOOL = 'json_output';

type Block = Record<string, unknown>;

/** Content parts -> Anthropic blocks; a part's `cache_control` stays on its block, a message's goes on its last block. */
function blocks(content: string | ContentPart[] | null, messageCache?: Record<string, unknown>): Block[] {
  let out: Block[];
  if (typeof content === 'string') out = content ? [{ type: 'text', text: content }] : [];
  else if (!Array.isArray(content)) out = [];
  else {
    out = content.flatMap((p): Block[] => {
      const cache = cacheControlOf(p);
      const withCache = (b: Block): Block[] => [cache ? { ...b, cache_control: cache } : b];
      if (p.type === 'text') return withCache({ type: 'text', text: String(p.text) });
      if (p.type === 'image_url') {
        const url = (p as { image_url: { url: string } }).image_url.url;
        const d = dataUrl(url);
        return withCache({ type: 'image', source: d ? { type: 'base64', media_type: d.mediaType, data: d.data } : { type: 'url', url } });
      }
      return [];
    });
  }
  if (messageCache && out.length > 0) out[out.length - 1] = { ...out[out.length - 1], cache_control: messageCache };
  return out;
}

/** Thinking blocks of an earlier turn, from its reasoning_details (they must come first, signatures unchanged). */
function thinkingBlocks(m: ChatMessage): Block[] {
  return detailsOf(m).flatMap((d): Block[] => {
    if (d.format !== undefined && !d.format.startsWith('anthropic')) return [];
    if (d.type === 'reasoning.text' && typeof d.signature === 'string') return [{ type: 'thinking', thinking: d.text ?? '', signature: d.signature }];
    if (d.type === 'reasoning.encrypted' && typeof d.data === 'string') return [{ type: 'redacted_thinking', data: d.data }];
    return [];
  });
}

function message(m: ChatMessage): { role: 'user' | 'assistant'; content: Block[] } {
  const cache = cacheControlOf(m);
  if (m.role === 'assistant') {
    const calls = (m.tool_calls ?? []).map((t) => ({ type: 'tool_use', id: t.id, name: t.function.name, input: parseArgs(t.function.arguments) }));
    const fc = m.function_call ? [{ type: 'tool_use', id: m.function_call.name, name: m.function_call.name, input: parseArgs(m.function_call.arguments) }] : [];
    return { role: 'assistant', content: [...thinkingBlocks(m), ...blocks(m.content, cache), ...calls, ...fc] };
  }
  if (m.role === 'tool' || m.role === 'function') {
    return { role: 'user', content: [{ type: 'tool_result', tool_use_id: m.tool_call_id ?? m.name ?? '', content: textOf(m.content), ...(cache ? { cache_control: cache } : {}) }] };
  }
  return { role: 'user', content: blocks(m.content, cache) };
}

/** System and developer messages: one string, or text blocks when any of them asks for caching. */
function systemOf(req: ChatRequest): string | Block[] {
  const sys = req.messages.filter((m) => m.role === 'system' || m.role === 'developer');
  const cached = sys.some((m) => cacheControlOf(m) || (Array.isArray(m.content) && m.content.some((p) => cacheControlOf(p))));
  if (!cached) return sys.map((m) => textOf(m.content)).join('\n\n');
  return sys.flatMap((m) => blocks(m.content, cacheControlOf(m)).filter((b) => b.type === 'text'));
}

/** reasoning_effort / reasoning -> extended thinking; Anthropic refuses temperature, top_k and a forced tool beside it. */
function applyThinking(req: ChatRequest, body: Record<string, unknown>): void {
  const ask = reasoningAsk(req);
  if (!ask) return;
  if (!ask.enabled) {
    body.thinking = { type: 'disabled' };
    return;
  }
  const max = Number(body.max_tokens);
  const budget = thinkingBudget(ask, max);
  if (max <= budget) body.max_tokens = budget + max; // the budget is part of max_tokens and must stay below it
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
  const messages = mergeConsecutive(req.messages.filter((m) => m.role !== 'system' && m.role !== 'developer').map(message));
  const o = { ...target.provider.options, ...target.deployment.options };
  const body: Record<string, unknown> = {
    model: target.deployment.model,
    max_tokens: req.max_completion_tokens ?? req.max_tokens ?? Number(o.max_tokens ?? 4096),
    messages,
  };
  if (system.length > 0) body.system = system;
  if (stream) body.stream = true;
  if (req.temperature !== undefined) body.temperature = Math.min(req.temperature, 1); // Anthropic's range is 0-1
  if (req.top_p !== undefined) body.top_p = req.top_p;
  if (req.top_k !== undefined) body.top_k = req.top_k;
  if (req.stop !== undefined && req.stop !== null) body.stop_sequences = Array.isArray(req.stop) ? req.stop : [req.stop];
  if (typeof req.user === 'string') body.metadata = { user_id: req.user };
  const tools: Block[] = (req.tools ?? []).map((t) => {
    const cache = cacheControlOf(t as unknown as ContentPart);
    return { name: t.function.name, ...(t.function.description ? { description: t.function.description } : {}), input_schema: t.function.parameters ?? { type: 'object', properties: {} }, ...(cache ? { cache_control: cache } : {}) };
  });
  let choice: Block | undefined;
  const tc = req.tool_choice;
  if (tc === 'none') choice = { type: 'none' };
  else if (tc === 'required') choice = { type: 'any' };
  else if (typeof tc === 'object' && tc) choice = { type: 'tool', name: tc.function.name };
  else if (tc === 'auto') choice = { type: 'auto' };
  const rf = req.response_format;
  if (rf?.type === 'json_schema' && rf.json_schema) {
    // JSON schema answers: a forced tool whose input is the answer.
    tools.push({ name: JSON_TOOL, description: 'Give the answer as JSON', input_schema: (rf.json_schema as { schema?: object }).schema ?? { type: 'object' } });
    choice = { type: 'tool', name: JSON_TOOL };
  } else if (rf?.type === 'json_object') {
    const ask = 'Answer with one valid JSON object and nothing else.';
    body.system = typeof system === 'string' ? `${system ? `${system}\n\n` : ''}${ask}` : [...system, { type: 'text', text: ask }];
  }
  if (req.parallel_tool_calls === false && tools.length > 0) choice = { ...(choice ?? { type: 'auto' }), disable_parallel_tool_use: true };
  if (tools.length > 0) body.tools = tools;
  if (choice && tools.length > 0) body.tool_choice = choice;
  applyThinking(req, body);
  return body;
}

export function buildAnthropicRequest(req: ChatRequest, target: UpstreamTarget, stream: boolean): UpstreamRequest {
  const o = { ...target.provider.options };
  return {
    url: joinUrl(target.provider.api_base ?? 'https://api.anthropic.com', '/v1/messages'),
    method: 'POST',
    headers: upstreamHeaders(target, { 'x-api-key': target.provider.api_key ?? '', 'anthropic-version': String(o.anthropic_version ?? '2023-06-01') }),
    body: JSON.stringify(anthropicBody(req, target, stream)),
  };
}
