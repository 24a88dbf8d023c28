import { errors } from '../../errors';
import type { ChatMessage, ChatRequest } from '../../types/openai';
import { buildPrompt } from '../../prompt/index';
import { dataUrl, parseArgs, textOf } from '../shared';
import { bearer, postJson, targetOptions } from '../shared/http';
import { applyParams } from '../shared/params';
import { plainRole, responseSchema } from '../shared/request';
import { reasoningAsk, threeLevelEffort } from '../reasoning';
import type { UpstreamRequest, UpstreamTarget } from '../types';
import { OLLAMA_TABLE } from './params';

export const OLLAMA_BASE = 'http://127.0.0.1:11434';

/** Ollama takes images only as base64: data: URLs are unpacked, a remote URL is refused (the gateway fetches none). */
function imagesOf(content: ChatMessage['content']): string[] {
  if (!Array.isArray(content)) return [];
  return content.flatMap((p) => {
    if (p.type !== 'image_url') return [];
    const d = dataUrl(String((p as { image_url?: { url?: string } }).image_url?.url ?? ''));
    if (!d) throw errors.invalidRequest('Ollama takes images only as base64 data: URLs', 'messages');
    return [d.data];
  });
}

/** OpenAI messages -> Ollama's; a tool result gets its function's name (tool_name) from the call it answers. */
function ollamaMessages(messages: ChatMessage[]): Array<Record<string, unknown>> {
  const names = new Map<string, string>();
  return messages.map((m) => {
    const role = plainRole(m.role);
    const out: Record<string, unknown> = { role, content: textOf(m.content) };
    const images = imagesOf(m.content);
    if (images.length) out.images = images;
    if (m.tool_calls?.length) {
      out.tool_calls = m.tool_calls.map((t) => {
        names.set(t.id, t.function.name);
        return { function: { name: t.function.name, arguments: parseArgs(t.function.arguments) } };
      });
    }
    if (role === 'tool') {
      const name = (m.tool_call_id && names.get(m.tool_call_id)) || m.name;
      if (name) out.tool_name = name;
    }
    return out;
  });
}

/** reasoning_effort / reasoning -> `think`: a level for gpt-oss (low, medium, high), a boolean for the rest. */
function thinkOf(req: ChatRequest, model: string): boolean | string | undefined {
  const ask = reasoningAsk(req);
  if (!ask) return undefined;
  if (!ask.enabled) return false;
  return /gpt-oss/.test(model) ? threeLevelEffort(ask) : true;
}

/** response_format -> `format`: "json", or the JSON schema the answer must follow. */
function formatOf(req: ChatRequest): unknown {
  const type = req.response_format?.type;
  if (type === 'json_schema') return responseSchema(req) ?? 'json';
  return type === 'json_object' ? 'json' : undefined;
}

/** /api/chat with messages, or /api/generate with a raw prompt (the `raw` option) built from the prompt template. */
export function buildOllamaRequest(req: ChatRequest, target: UpstreamTarget, stream: boolean): UpstreamRequest {
  const options = applyParams(req, OLLAMA_TABLE, {});
  const format = formatOf(req);
  const think = thinkOf(req, target.deployment.model);
  const common = {
    model: target.deployment.model,
    stream,
    ...(Object.keys(options).length ? { options } : {}),
    ...(format ? { format } : {}),
    ...(think !== undefined ? { think } : {}),
  };
  const raw = Boolean(targetOptions(target).raw);
  const tools = req.tools?.length && req.tool_choice !== 'none' ? { tools: req.tools } : {};
  const body = raw
    ? { ...common, prompt: buildPrompt(req.messages, target.promptOptions), raw: true }
    : { ...common, messages: ollamaMessages(req.messages), ...tools };
  return postJson(target, OLLAMA_BASE, raw ? '/api/generate' : '/api/chat', bearer(target.provider.api_key), body);
}
