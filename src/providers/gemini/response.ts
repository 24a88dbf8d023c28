import { errors } from '../../errors';
import type {
  ChatCompletion,
  CompletionChoice,
  FinishReason,
  ReasoningDetail,
  ToolCall,
  Usage,
} from '../../types/openai';
import { isRecord, usage } from '../shared';
import { answerText, toolCall } from '../shared/answer';
import type { AdapterContext } from '../types';
import { GEMINI_FORMAT } from './request';

const FINISH: Record<string, FinishReason> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  SPII: 'content_filter',
  IMAGE_SAFETY: 'content_filter',
  LANGUAGE: 'content_filter',
  OTHER: 'stop',
  MALFORMED_FUNCTION_CALL: 'stop',
};

export type Candidate = { content?: { parts?: Array<Record<string, unknown>> }; finishReason?: string; index?: number };

export function geminiUsage(m: unknown): Usage | undefined {
  if (!isRecord(m)) return undefined;
  const n = (k: string) => (typeof m[k] === 'number' ? (m[k] as number) : 0);
  const thoughts = n('thoughtsTokenCount');
  return usage(n('promptTokenCount'), n('candidatesTokenCount') + thoughts, n('cachedContentTokenCount'), thoughts);
}

/** A candidate's finish reason under OpenAI's name; a STOP after function calls is tool_calls. */
export function finishOf(c: Candidate, hasCalls: boolean): FinishReason | null {
  if (!c.finishReason) return null;
  return hasCalls && c.finishReason === 'STOP' ? 'tool_calls' : (FINISH[c.finishReason] ?? 'stop');
}

/** A part's thought signature as a reasoning detail, tied to its tool call when it came on one. */
export function signatureDetail(p: Record<string, unknown>, callId: string | null, index: number): ReasoningDetail[] {
  if (typeof p.thoughtSignature !== 'string') return [];
  return [{ type: 'reasoning.encrypted', data: p.thoughtSignature, id: callId, format: GEMINI_FORMAT, index }];
}

/** Gemini gives function calls no ids: the gateway names them by candidate and position. */
export function callId(ctx: AdapterContext, candidate: number, i: number): string {
  return `call_${ctx.id.slice(-10)}_${candidate}_${i}`;
}

/** A functionCall part as an OpenAI tool call with the given id. */
export function functionCallOf(id: string, call: Record<string, unknown>): ToolCall {
  return toolCall(id, String(call.name), call.args);
}

function choiceOf(ctx: AdapterContext, c: Candidate, ci: number): CompletionChoice {
  let text = '';
  let thoughts = '';
  const details: ReasoningDetail[] = [];
  const calls: ToolCall[] = [];
  for (const p of c.content?.parts ?? []) {
    if (typeof p.text === 'string' && p.thought) thoughts += p.text;
    else if (typeof p.text === 'string') text += p.text;
    let id: string | null = null;
    if (isRecord(p.functionCall)) {
      id = callId(ctx, ci, calls.length);
      calls.push(functionCallOf(id, p.functionCall));
    }
    details.push(...signatureDetail(p, id, details.length));
  }
  const reasoning = ctx.excludeReasoning
    ? {}
    : { ...(thoughts ? { reasoning: thoughts } : {}), ...(details.length ? { reasoning_details: details } : {}) };
  const message = {
    role: 'assistant' as const,
    content: answerText(text, calls),
    ...reasoning,
    ...(calls.length ? { tool_calls: calls } : {}),
  };
  return { index: c.index ?? ci, message, finish_reason: finishOf(c, calls.length > 0), logprobs: null };
}

export function parseGeminiResponse(body: unknown, ctx: AdapterContext): ChatCompletion {
  if (!isRecord(body)) throw errors.upstreamProtocol(ctx.provider ?? 'gemini', 'the answer was not an object');
  const candidates = (body.candidates as Candidate[] | undefined) ?? [];
  const blocked = isRecord(body.promptFeedback) && body.promptFeedback.blockReason;
  const choices: CompletionChoice[] = candidates.map((c, ci) => choiceOf(ctx, c, ci));
  if (choices.length === 0) {
    const finish_reason = blocked ? 'content_filter' : 'stop';
    choices.push({ index: 0, message: { role: 'assistant', content: '' }, finish_reason, logprobs: null });
  }
  const u = geminiUsage(body.usageMetadata);
  return {
    id: ctx.id,
    object: 'chat.completion',
    created: ctx.created,
    model: ctx.model,
    choices,
    ...(u ? { usage: u } : {}),
  };
}
