import type { ChatMessage, ChatRequest } from '../../types/openai';
import { textOf } from '../shared';
import { bearer, postJson } from '../shared/http';
import { applyParams } from '../shared/params';
import { forcedTool, plainRole, responseSchema } from '../shared/request';
import { reasoningAsk } from '../reasoning';
import type { UpstreamRequest, UpstreamTarget } from '../types';
import { COHERE_TABLE } from './params';

export const COHERE_BASE = 'https://api.cohere.com';

/** User content keeps its parts (text and image_url, which Cohere v2 takes in the same shape); other roles are text. */
function cohereContent(m: ChatMessage, role: string): unknown {
  if (role === 'user' && Array.isArray(m.content) && m.content.some((p) => p.type === 'image_url')) {
    return m.content.filter((p) => p.type === 'text' || p.type === 'image_url');
  }
  return textOf(m.content);
}

function cohereMessage(m: ChatMessage): Record<string, unknown> {
  const role = plainRole(m.role);
  const content = cohereContent(m, role);
  const out: Record<string, unknown> = { role };
  // An assistant turn that only calls tools carries no content (Cohere refuses an empty one).
  if (!(m.tool_calls?.length && content === '')) out.content = content;
  if (m.tool_calls?.length) {
    out.tool_calls = m.tool_calls.map((t) => ({
      id: t.id,
      type: 'function',
      function: { name: t.function.name, arguments: t.function.arguments },
    }));
  }
  if (role === 'tool') out.tool_call_id = m.tool_call_id ?? m.name;
  return out;
}

/** Tools and tool_choice; Cohere has no "this function" choice: a forced function is REQUIRED with only that tool. */
function applyTools(req: ChatRequest, body: Record<string, unknown>): void {
  const forced = forcedTool(req);
  if (req.tools?.length) body.tools = forced ? req.tools.filter((t) => t.function.name === forced) : req.tools;
  if (req.tool_choice === 'required' || forced) body.tool_choice = 'REQUIRED';
  if (req.tool_choice === 'none') body.tool_choice = 'NONE';
}

export function buildCohereRequest(req: ChatRequest, target: UpstreamTarget, stream: boolean): UpstreamRequest {
  const body: Record<string, unknown> = {
    model: target.deployment.model,
    messages: req.messages.map(cohereMessage),
    stream,
  };
  applyParams(req, COHERE_TABLE, body);
  applyTools(req, body);
  const ask = reasoningAsk(req);
  if (ask) {
    const budget = ask.maxTokens ? { token_budget: ask.maxTokens } : {};
    body.thinking = ask.enabled ? { type: 'enabled', ...budget } : { type: 'disabled' };
  }
  const rf = req.response_format;
  if (rf?.type === 'json_object') body.response_format = { type: 'json_object' };
  if (rf?.type === 'json_schema') body.response_format = { type: 'json_object', json_schema: responseSchema(req) };
  return postJson(target, COHERE_BASE, '/v2/chat', bearer(target.provider.api_key), body);
}
