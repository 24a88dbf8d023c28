import { errors, upstreamStatusError, type GatewayError } from '../../errors';
import type { ChatCompletion, ChatCompletionChunk, ChatMessage, ChatRequest, FinishReason, ToolCall } from '../../types/openai';
import { buildPrompt } from '../../prompt/index';
import { bearer, joinUrl, upstreamHeaders } from '../shared/http';
import { chunk, completion, dataUrl, isRecord, parseArgs, textOf, usage, usageChunk, parseEventJson, reasoningChunk } from '../shared';
import { reasoningAsk } from '../reasoning';
import type { AdapterContext, HttpProviderAdapter, StreamTranslator, UpstreamEvent, UpstreamRequest, UpstreamTarget } from '../types';

function rawMode(target: UpstreamTarget): boolean {
  return Boolean({ ...target.provider.options, ...target.deployment.options }.raw);
}

/** Ollama takes images only as base64: data: URLs are unpacked, a remote URL is refused (the gateway fetches nothing). */
function imagesOf(content: ChatMessage['content']): string[] {
  if (!Array.isArray(content)) return [];
  return content.flatMap((p) => {
    if (p.type !== 'image_url') return [];
    const d = dataUrl(String((p as { image_url?: { url?: string } }).image_url?.url ?? ''));
    if (!d) throw errors.invalidRequest('Ollama takes images only as base64 data: URLs', 'messages');
    return [d.data];
  });
}

/** OpenAI messages -> Ollama's; a tool result gets its function's name (tool_name) from the assistant call it answers. */
function ollamaMessages(messages: ChatMessage[]): Array<Record<string, unknown>> {
  const names = new Map<string, string>();
  return messages.map((m) => {
    const role = m.role === 'developer' ? 'system' : m.role === 'function' ? 'tool' : m.role;
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

/** Sampling fields go in Ollama's `options` under its own names. */
function ollamaOptions(req: ChatRequest): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  const map: Array<[keyof ChatRequest, string]> = [
    ['temperature', 'temperature'], ['top_p', 'top_p'], ['top_k', 'top_k'], ['min_p', 'min_p'], ['seed', 'seed'], ['repetition_penalty', 'repeat_penalty'],
    ['presence_penalty', 'presence_penalty'], ['frequency_penalty', 'frequency_penalty'],
  ];
  for (const [from, to] of map) if (req[from] !== undefined) o[to] = req[from];
  const max = req.max_completion_tokens ?? req.max_tokens;
  if (max !== undefined) o.num_predict = max;
  if (req.stop !== undefined && req.stop !== null) o.stop = Array.isArray(req.stop) ? req.stop : [req.stop];
  return o;
}

/** reasoning_effort / reasoning -> `think`: a level for gpt-oss (which takes low/medium/high), a boolean for the rest. */
function thinkOf(req: ChatRequest, model: string): boolean | string | undefined {
  const ask = reasoningAsk(req);
  if (!ask) return undefined;
  if (!ask.enabled) return false;
  if (/gpt-oss/.test(model)) return ask.effort === 'minimal' ? 'low' : ask.effort === 'xhigh' ? 'high' : ask.effort ?? 'medium';
  return true;
}

/** Tool choices Ollama cannot honour ("required", a forced function): the params plugin drops and names them. */
export function ollamaUnsupported(req: ChatRequest): string[] {
  const tc = req.tool_choice;
  return tc === 'required' || (typeof tc === 'object' && tc !== null) ? ['tool_choice'] : [];
}

function buildOllamaRequest(req: ChatRequest, target: UpstreamTarget, stream: boolean): UpstreamRequest {
  const base = target.provider.api_base ?? 'http://127.0.0.1:11434';
  const options = ollamaOptions(req);
  const format = req.response_format?.type === 'json_schema' ? (req.response_format.json_schema as { schema?: unknown } | undefined)?.schema ?? 'json' : req.response_format?.type === 'json_object' ? 'json' : undefined;
  const think = thinkOf(req, target.deployment.model);
  const common = { model: target.deployment.model, stream, ...(Object.keys(options).length ? { options } : {}), ...(format ? { format } : {}), ...(think !== undefined ? { think } : {}) };
  const body = rawMode(target)
    ? { ...common, prompt: buildPrompt(req.messages, target.promptOptions), raw: true }
    : { ...common, messages: ollamaMessages(req.messages), ...(req.tools?.length && req.tool_choice !== 'none' ? { tools: req.tools } : {}) };
  return { url: joinUrl(base, rawMode(target) ? '/api/generate' : '/api/chat'), method: 'POST', headers: upstreamHeaders(target, bearer(target.provider.api_key)), body: JSON.stringify(body) };
}

const FINISH: Record<string, FinishReason> = { stop: 'stop', length: 'length', load: 'stop', unload: 'stop' };

function toolCalls(ctx: AdapterContext, m: unknown, offset = 0): ToolCall[] {
  const calls = isRecord(m) && Array.isArray(m.tool_calls) ? (m.tool_calls as Array<{ function?: { name?: string; arguments?: unknown } }>) : [];
  return calls.map((t, i) => ({ id: `call_${ctx.id.slice(-10)}_${offset + i}`, type: 'function', function: { name: String(t.function?.name ?? ''), arguments: JSON.stringify(t.function?.arguments ?? {}) } }));
}

function finishOf(d: Record<string, unknown>, calls: number): FinishReason {
  return calls > 0 ? 'tool_calls' : FINISH[String(d.done_reason ?? 'stop')] ?? 'stop';
}

function parseOllamaResponse(body: unknown, ctx: AdapterContext): ChatCompletion {
  if (!isRecord(body)) throw errors.upstreamProtocol(ctx.provider ?? 'ollama', 'the answer was not an object');
  const calls = toolCalls(ctx, body.message);
  const text = typeof body.response === 'string' ? body.response : isRecord(body.message) ? String(body.message.content ?? '') : '';
  const thinking = thinkingOf(body);
  return completion(ctx, calls.length && !text ? null : text, calls, finishOf(body, calls.length), usage(Number(body.prompt_eval_count ?? 0), Number(body.eval_count ?? 0)), { text: thinking, details: [] });
}

/** Ollama's thinking text: message.thinking (/api/chat) or thinking (/api/generate). */
function thinkingOf(d: Record<string, unknown>): string {
  if (isRecord(d.message) && typeof d.message.thinking === 'string') return d.message.thinking;
  return typeof d.thinking === 'string' ? d.thinking : '';
}

function ollamaError(provider: string, status: number, body: unknown): GatewayError {
  const message = isRecord(body) && typeof body.error === 'string' ? body.error : typeof body === 'string' ? body.slice(0, 300) : '';
  return upstreamStatusError(provider, status, message);
}

/** NDJSON: one object per line, the last with done: true and the token counts. */
function createOllamaTranslator(ctx: AdapterContext): StreamTranslator {
  let done = false;
  let started = false;
  let calls = 0;
  return {
    get done() {
      return done;
    },
    push(ev: UpstreamEvent): ChatCompletionChunk[] {
      const d = parseEventJson(ev, ctx.provider ?? 'ollama', 'a stream line');
      if (!isRecord(d)) return [];
      if (typeof d.error === 'string') throw ollamaError(ctx.provider ?? 'ollama', 500, d);
      const out: ChatCompletionChunk[] = [];
      if (!started) {
        started = true;
        out.push(chunk(ctx, { role: 'assistant', content: '' }));
      }
      const text = typeof d.response === 'string' ? d.response : isRecord(d.message) ? String(d.message.content ?? '') : '';
      out.push(...reasoningChunk(ctx, thinkingOf(d)));
      if (text) out.push(chunk(ctx, { content: text }));
      for (const t of toolCalls(ctx, d.message, calls)) out.push(chunk(ctx, { tool_calls: [{ index: calls++, id: t.id, type: 'function', function: t.function }] }));
      if (d.done === true) {
        done = true;
        out.push(chunk(ctx, {}, finishOf(d, calls)), usageChunk(ctx, usage(Number(d.prompt_eval_count ?? 0), Number(d.eval_count ?? 0))));
      }
      return out;
    },
    finish: () => [],
  };
}

/** Ollama: /api/chat (NDJSON stream), or /api/generate with a raw prompt built from the prompt-template fields. */
export const ollamaAdapter: HttpProviderAdapter = {
  kind: 'http',
  type: 'ollama',
  supportedParams: ['temperature', 'top_p', 'top_k', 'min_p', 'seed', 'repetition_penalty', 'presence_penalty', 'frequency_penalty', 'max_tokens', 'max_completion_tokens', 'stop', 'response_format', 'tools', 'tool_choice', 'reasoning_effort', 'reasoning', 'stream', 'stream_options'],
  unsupportedValues: ollamaUnsupported,
  streamFormat: 'ndjson',
  buildRequest: buildOllamaRequest,
  parseResponse: parseOllamaResponse,
  createStreamTranslator: createOllamaTranslator,
  mapError: (status, body, _headers, provider) => ollamaError(provider, status, body),
};
