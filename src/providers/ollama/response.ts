import { errors } from '../../errors';
import type { ChatCompletion, FinishReason, ToolCall, Usage } from '../../types/openai';
import { completion, isRecord, usage } from '../shared';
import { answerText, toolCall } from '../shared/answer';
import type { AdapterContext } from '../types';

const FINISH: Record<string, FinishReason> = { stop: 'stop', length: 'length', load: 'stop', unload: 'stop' };

type Json = Record<string, unknown>;

/** Ollama gives tool calls no ids: the gateway numbers them (from `offset` in a stream). */
export function toolCalls(ctx: AdapterContext, m: unknown, offset = 0): ToolCall[] {
  type Call = { function?: { name?: string; arguments?: unknown } };
  const calls = isRecord(m) && Array.isArray(m.tool_calls) ? (m.tool_calls as Call[]) : [];
  return calls.map((t, i) =>
    toolCall(`call_${ctx.id.slice(-10)}_${offset + i}`, String(t.function?.name ?? ''), t.function?.arguments),
  );
}

export function finishOf(d: Json, calls: number): FinishReason {
  return calls > 0 ? 'tool_calls' : (FINISH[String(d.done_reason ?? 'stop')] ?? 'stop');
}

/** The answer's text: response (/api/generate) or message.content (/api/chat). */
export function replyText(d: Json): string {
  if (typeof d.response === 'string') return d.response;
  return isRecord(d.message) ? String(d.message.content ?? '') : '';
}

/** Ollama's thinking text: message.thinking (/api/chat) or thinking (/api/generate). */
export function thinkingOf(d: Json): string {
  if (isRecord(d.message) && typeof d.message.thinking === 'string') return d.message.thinking;
  return typeof d.thinking === 'string' ? d.thinking : '';
}

export function ollamaUsage(d: Json): Usage {
  return usage(Number(d.prompt_eval_count ?? 0), Number(d.eval_count ?? 0));
}

export function parseOllamaResponse(body: unknown, ctx: AdapterContext): ChatCompletion {
  if (!isRecord(body)) throw errors.upstreamProtocol(ctx.provider ?? 'ollama', 'the answer was not an object');
  const calls = toolCalls(ctx, body.message);
  const text = answerText(replyText(body), calls);
  return completion(ctx, text, calls, finishOf(body, calls.length), ollamaUsage(body), {
    text: thinkingOf(body),
    details: [],
  });
}
