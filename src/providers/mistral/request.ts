import { createHash } from 'node:crypto';
import type { ChatMessage, ChatRequest } from '../../types/openai';
import { bearer, postJson } from '../shared/http';
import { applyParams } from '../shared/params';
import { plainRole } from '../shared/request';
import type { UpstreamRequest, UpstreamTarget } from '../types';
import { MISTRAL_TABLE } from './params';

export const MISTRAL_BASE = 'https://api.mistral.ai';

const MISTRAL_ID = /^[a-zA-Z0-9]{9}$/;

/**
 * Mistral accepts only 9-character alphanumeric tool-call ids; ids made elsewhere (another
 * provider, a fallback, the client) are mapped to one deterministically, the same on the
 * assistant call and on the tool result that answers it.
 */
export function mistralToolId(id: string): string {
  if (MISTRAL_ID.test(id)) return id;
  const hash = createHash('sha256').update(id).digest('base64');
  return hash
    .replace(/[^a-zA-Z0-9]/g, '')
    .slice(0, 9)
    .padEnd(9, '0');
}

/**
 * Mistral refuses any message field it does not define: only role, content, tool_calls
 * (assistant), tool_call_id and name (tool) and prefix (assistant) go; OpenAI's `name` on
 * user messages and the SDK's `refusal` / `parsed` / reasoning fields are left out.
 */
function mistralMessage(m: ChatMessage): Record<string, unknown> {
  const role = plainRole(m.role);
  const out: Record<string, unknown> = { role, content: m.content ?? null };
  if (role === 'assistant') {
    if (m.tool_calls?.length) {
      out.tool_calls = m.tool_calls.map((t) => ({
        id: mistralToolId(t.id),
        type: 'function',
        function: { name: t.function.name, arguments: t.function.arguments },
      }));
    }
    if (typeof m.prefix === 'boolean') out.prefix = m.prefix;
  }
  if (role === 'tool') {
    const id = m.tool_call_id ?? m.name;
    if (typeof id === 'string') out.tool_call_id = mistralToolId(id);
    if (typeof m.name === 'string') out.name = m.name;
  }
  return out;
}

/** OpenAI's request with Mistral's own names (see params.ts) and only the message fields it defines. */
export function mistralBody(req: ChatRequest, target: UpstreamTarget, stream: boolean): Record<string, unknown> {
  const body = applyParams(req, MISTRAL_TABLE, { model: target.deployment.model });
  if (stream) body.stream = true;
  body.messages = req.messages.map(mistralMessage);
  return body;
}

export function buildMistralRequest(req: ChatRequest, target: UpstreamTarget, stream: boolean): UpstreamRequest {
  const body = mistralBody(req, target, stream);
  return postJson(target, MISTRAL_BASE, '/v1/chat/completions', bearer(target.provider.api_key), body);
}
