import { errors } from '../../errors';
import type { ChatCompletion, FinishReason, ToolCall, Usage } from '../../types/openai';
import { completion, isRecord, usage } from '../shared';
import { answerText } from '../shared/answer';
import type { AdapterContext } from '../types';
import { generationFailed } from './errors';

const FINISH: Record<string, FinishReason> = {
  COMPLETE: 'stop',
  STOP_SEQUENCE: 'stop',
  MAX_TOKENS: 'length',
  TOOL_CALL: 'tool_calls',
  ERROR: 'stop',
  TIMEOUT: 'stop',
};

export function finishOf(reason: unknown): FinishReason {
  return FINISH[String(reason)] ?? 'stop';
}

/** What Cohere bills (billed_units, else tokens), and its prompt-cache hits (cached_tokens). */
export function cohereUsage(u: unknown): Usage {
  const t =
    isRecord(u) && isRecord(u.billed_units) ? u.billed_units : isRecord(u) && isRecord(u.tokens) ? u.tokens : {};
  const cached = isRecord(u) && typeof u.cached_tokens === 'number' ? u.cached_tokens : 0;
  return usage(Number(t.input_tokens ?? 0), Number(t.output_tokens ?? 0), cached);
}

/** The text of the content parts of one type (text or thinking). */
function partsText(parts: Array<Record<string, unknown>>, type: 'text' | 'thinking'): string {
  return parts.map((c) => (c.type === type ? String(c[type] ?? '') : '')).join('');
}

export function parseCohereResponse(body: unknown, ctx: AdapterContext): ChatCompletion {
  const provider = ctx.provider ?? 'cohere';
  if (!isRecord(body) || !isRecord(body.message)) throw errors.upstreamProtocol(provider, 'no message in the answer');
  if (body.finish_reason === 'ERROR') throw generationFailed(provider);
  const m = body.message;
  const parts = Array.isArray(m.content) ? (m.content as Array<Record<string, unknown>>) : [];
  const calls = (Array.isArray(m.tool_calls) ? (m.tool_calls as ToolCall[]) : []).map((t) => ({
    id: t.id,
    type: 'function' as const,
    function: { name: t.function.name, arguments: t.function.arguments ?? '{}' },
  }));
  const text = partsText(parts, 'text');
  const reasoning = { text: partsText(parts, 'thinking'), details: [] };
  return completion(
    ctx,
    answerText(text, calls),
    calls,
    finishOf(body.finish_reason),
    cohereUsage(body.usage),
    reasoning,
  );
}
