import type { ChatMessage, ChatRequest, ContentPart } from '../../types/openai';
import { joinUrl, upstreamHeaders } from '../openai/request';
import { dataUrl, mergeConsecutive, parseArgs, textOf } from '../shared';
import type { UpstreamRequest, UpstreamTarget } from '../types';

/** The tool that carries a JSON-schema answer (Anthropic has no response_format): its input becomes the text. */
export const JSON_TOOL = 'json_output';

type Block = Record<string, unknown>;

function blocks(content: string | ContentPart[] | null): Block[] {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  if (!Array.isArray(content)) return [];
  return content.flatMap((p): Block[] => {
    if (p.type === 'text') return [{ type: 'text', text: String(p.text) }];
    if (p.type === 'image_url') {
      const url = (p as { image_url: { url: string } }).image_url.url;
      const d = dataUrl(url);
      return [{ type: 'image', source: d ? { type: 'base64', media_type: d.mediaType, data: d.data } : { type: 'url', url } }];
    }
    return [];
  });
}

function message(m: ChatMessage): { role: 'user' | 'assistant'; content: Block[] } {
  if (m.role === 'assistant') {
    const calls = (m.tool_calls ?? []).map((t) => ({ type: 'tool_use', id: t.id, name: t.function.name, input: parseArgs(t.function.arguments) }));
    const fc = m.function_call ? [{ type: 'tool_use', id: m.function_call.name, name: m.function_call.name, input: parseArgs(m.function_call.arguments) }] : [];
    return { role: 'assistant', content: [...blocks(m.content), ...calls, ...fc] };
  }
  if (m.role === 'tool' || m.role === 'function') {
    return { role: 'user', content: [{ type: 'tool_result', tool_use_id: m.tool_call_id ?? m.name ?? '', content: textOf(m.content) }] };
  }
  return { role: 'user', content: blocks(m.content) };
}

/** OpenAI chat request -> Anthropic Messages request. */
export function anthropicBody(req: ChatRequest, target: UpstreamTarget, stream: boolean): Record<string, unknown> {
  const system = req.messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => textOf(m.content)).join('\n\n');
  const messages = mergeConsecutive(req.messages.filter((m) => m.role !== 'system' && m.role !== 'developer').map(message));
  const o = { ...target.provider.options, ...target.deployment.options };
  const body: Record<string, unknown> = {
    model: target.deployment.model,
    max_tokens: req.max_completion_tokens ?? req.max_tokens ?? Number(o.max_tokens ?? 4096),
    messages,
  };
  if (system) body.system = system;
  if (stream) body.stream = true;
  if (req.temperature !== undefined) body.temperature = Math.min(req.temperature, 1); // Anthropic's range is 0-1
  if (req.top_p !== undefined) body.top_p = req.top_p;
  if (req.top_k !== undefined) body.top_k = req.top_k;
  if (req.stop !== undefined && req.stop !== null) body.stop_sequences = Array.isArray(req.stop) ? req.stop : [req.stop];
  if (typeof req.user === 'string') body.metadata = { user_id: req.user };
  const tools: Block[] = (req.tools ?? []).map((t) => ({ name: t.function.name, ...(t.function.description ? { description: t.function.description } : {}), input_schema: t.function.parameters ?? { type: 'object', properties: {} } }));
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
    body.system = `${system ? `${system}\n\n` : ''}Answer with one valid JSON object and nothing else.`;
  }
  if (req.parallel_tool_calls === false && tools.length > 0) choice = { ...(choice ?? { type: 'auto' }), disable_parallel_tool_use: true };
  if (tools.length > 0) body.tools = tools;
  if (choice && tools.length > 0) body.tool_choice = choice;
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
