import { errors, upstreamStatusError, type GatewayError } from '../../errors';
import type { ChatCompletion, ChatCompletionChunk, CompletionChoice, FinishReason, ReasoningDetail, ToolCall, Usage } from '../../types/openai';
import { chunk, isRecord, usage, usageChunk, parseEventJson, reasoningChunk } from '../shared';
import { GEMINI_FORMAT } from './request';
import type { AdapterContext, StreamTranslator, UpstreamEvent } from '../types';
import { retryAfterSeconds } from '../shared/http';

const FINISH: Record<string, FinishReason> = {
  STOP: 'stop', MAX_TOKENS: 'length', SAFETY: 'content_filter', RECITATION: 'content_filter', BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter', SPII: 'content_filter', IMAGE_SAFETY: 'content_filter', LANGUAGE: 'content_filter', OTHER: 'stop', MALFORMED_FUNCTION_CALL: 'stop',
};

type Candidate = { content?: { parts?: Array<Record<string, unknown>> }; finishReason?: string; index?: number };

function geminiUsage(m: unknown): Usage | undefined {
  if (!isRecord(m)) return undefined;
  const n = (k: string) => (typeof m[k] === 'number' ? (m[k] as number) : 0);
  return usage(n('promptTokenCount'), n('candidatesTokenCount') + n('thoughtsTokenCount'), n('cachedContentTokenCount'), n('thoughtsTokenCount'));
}

function finishOf(c: Candidate, hasCalls: boolean): FinishReason | null {
  if (!c.finishReason) return null;
  return hasCalls && c.finishReason === 'STOP' ? 'tool_calls' : FINISH[c.finishReason] ?? 'stop';
}

/** A part's thought signature as a reasoning detail, tied to its tool call when it came on one. */
function signatureDetail(p: Record<string, unknown>, callId: string | null, index: number): ReasoningDetail[] {
  return typeof p.thoughtSignature === 'string' ? [{ type: 'reasoning.encrypted', data: p.thoughtSignature, id: callId, format: GEMINI_FORMAT, index }] : [];
}

/** Gemini gives function calls no ids: the gateway names them by candidate and position. */
function callId(ctx: AdapterContext, candidate: number, i: number): string {
  return `call_${ctx.id.slice(-10)}_${candidate}_${i}`;
}

export function parseGeminiResponse(body: unknown, ctx: AdapterContext): ChatCompletion {
  if (!isRecord(body)) throw errors.upstreamProtocol(ctx.provider ?? 'gemini', 'the answer was not an object');
  const candidates = (body.candidates as Candidate[] | undefined) ?? [];
  const blocked = isRecord(body.promptFeedback) && body.promptFeedback.blockReason;
  const choices: CompletionChoice[] = candidates.map((c, ci) => {
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
        calls.push({ id, type: 'function', function: { name: String(p.functionCall.name), arguments: JSON.stringify(p.functionCall.args ?? {}) } });
      }
      details.push(...signatureDetail(p, id, details.length));
    }
    const reasoning = ctx.excludeReasoning ? {} : { ...(thoughts ? { reasoning: thoughts } : {}), ...(details.length ? { reasoning_details: details } : {}) };
    return { index: c.index ?? ci, message: { role: 'assistant', content: calls.length && !text ? null : text, ...reasoning, ...(calls.length ? { tool_calls: calls } : {}) }, finish_reason: finishOf(c, calls.length > 0), logprobs: null };
  });
  if (choices.length === 0) choices.push({ index: 0, message: { role: 'assistant', content: '' }, finish_reason: blocked ? 'content_filter' : 'stop', logprobs: null });
  const u = geminiUsage(body.usageMetadata);
  return { id: ctx.id, object: 'chat.completion', created: ctx.created, model: ctx.model, choices, ...(u ? { usage: u } : {}) };
}

export function geminiError(provider: string, status: number, body: unknown, retryAfter?: number): GatewayError {
  const e = isRecord(body) && isRecord(body.error) ? body.error : Array.isArray(body) && isRecord(body[0]) && isRecord(body[0].error) ? body[0].error : undefined;
  const message = typeof e?.message === 'string' ? e.message : typeof body === 'string' ? body.slice(0, 300) : '';
  const code = /exceeds the maximum number of tokens|input token count/i.test(message) ? 'context_length_exceeded' : undefined;
  return upstreamStatusError(provider, status, message, code, retryAfter);
}

export function mapGeminiError(status: number, body: unknown, headers: Record<string, string | string[] | undefined>, provider: string): GatewayError {
  return geminiError(provider, status, body, retryAfterSeconds(headers));
}

/** streamGenerateContent?alt=sse: each event is a GenerateContentResponse with the new parts. */
export function createGeminiTranslator(ctx: AdapterContext): StreamTranslator {
  let done = false;
  let started = false;
  const callCount: number[] = [];
  const detailCount: number[] = [];
  let last: Usage | undefined;
  return {
    get done() {
      return done;
    },
    push(ev: UpstreamEvent): ChatCompletionChunk[] {
      const d = parseEventJson(ev, ctx.provider ?? 'gemini');
      if (isRecord(d) && isRecord(d.error)) throw geminiError(ctx.provider ?? 'gemini', Number(d.error.code ?? 500), d);
      if (!isRecord(d)) return [];
      const out: ChatCompletionChunk[] = [];
      if (!started) {
        started = true;
        out.push(chunk(ctx, { role: 'assistant', content: '' }));
      }
      last = geminiUsage(d.usageMetadata) ?? last;
      const candidates = (d.candidates as Candidate[] | undefined) ?? [];
      if (candidates.length === 0 && isRecord(d.promptFeedback) && d.promptFeedback.blockReason) {
        done = true;
        out.push(chunk(ctx, {}, 'content_filter'));
      }
      candidates.forEach((c, ci) => {
        const index = c.index ?? ci;
        for (const p of c.content?.parts ?? []) {
          if (typeof p.text === 'string' && p.text && p.thought) out.push(...reasoningChunk(ctx, p.text, [], index));
          else if (typeof p.text === 'string' && p.text) out.push(chunk(ctx, { content: p.text }, null, index));
          let id: string | null = null;
          if (isRecord(p.functionCall)) {
            const i = callCount[index] ?? 0;
            callCount[index] = i + 1;
            id = callId(ctx, index, i);
            out.push(chunk(ctx, { tool_calls: [{ index: i, id, type: 'function', function: { name: String(p.functionCall.name), arguments: JSON.stringify(p.functionCall.args ?? {}) } }] }, null, index));
          }
          const sig = signatureDetail(p, id, detailCount[index] ?? 0);
          if (sig.length) detailCount[index] = (detailCount[index] ?? 0) + 1;
          out.push(...reasoningChunk(ctx, '', sig, index));
        }
        const f = finishOf(c, (callCount[index] ?? 0) > 0);
        if (f) {
          done = true;
          out.push(chunk(ctx, {}, f, index));
        }
      });
      return out;
    },
    finish: () => (done && last ? [usageChunk(ctx, last)] : []),
  };
}
