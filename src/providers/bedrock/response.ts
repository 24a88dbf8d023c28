import { errors } from '../../errors';
import type { ChatCompletion, FinishReason, ReasoningDetail, ToolCall, Usage } from '../../types/openai';
import { completion, isRecord, usage } from '../shared';
import { answerText, encryptedDetail, textDetail, toolCall } from '../shared/answer';
import type { AdapterContext } from '../types';

type Block = Record<string, unknown>;

/** The format name reasoning_details carry for Converse reasoning blocks. */
export const BEDROCK_FORMAT = 'bedrock-converse-v1';

const FINISH: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
};

export function finishOf(stopReason: unknown): FinishReason {
  return FINISH[String(stopReason)] ?? 'stop';
}

/** Converse's inputTokens excludes cache reads and writes; prompt_tokens counts all three. */
export function bedrockUsage(u: unknown): Usage {
  const n = (k: string) => (isRecord(u) && typeof u[k] === 'number' ? (u[k] as number) : 0);
  const read = n('cacheReadInputTokens');
  const written = n('cacheWriteInputTokens');
  const result = usage(n('inputTokens') + read + written, n('outputTokens'), read, undefined, written);
  // cacheDetails: the writes by TTL ("5m" | "1h"); one-hour writes are billed apart (cache_write_1h).
  const details = isRecord(u) && Array.isArray(u.cacheDetails) ? (u.cacheDetails as unknown[]) : [];
  let hour = 0;
  for (const d of details)
    if (isRecord(d) && d.ttl === '1h' && typeof d.inputTokens === 'number') hour += d.inputTokens;
  if (hour > 0 && result.prompt_tokens_details) result.prompt_tokens_details.cache_write_1h_tokens = hour;
  return result;
}

function reasoningDetail(rc: Record<string, unknown>, index: number): ReasoningDetail | undefined {
  if (isRecord(rc.reasoningText)) {
    const r = rc.reasoningText;
    const signature = typeof r.signature === 'string' ? r.signature : null;
    return textDetail(String(r.text ?? ''), BEDROCK_FORMAT, index, signature);
  }
  if (typeof rc.redactedContent === 'string') return encryptedDetail(rc.redactedContent, BEDROCK_FORMAT, index);
  return undefined;
}

export function parseBedrockResponse(body: unknown, ctx: AdapterContext): ChatCompletion {
  const msg =
    isRecord(body) && isRecord(body.output) && isRecord(body.output.message) ? body.output.message : undefined;
  if (!msg || !Array.isArray(msg.content)) {
    throw errors.upstreamProtocol(ctx.provider ?? 'bedrock', 'no output message in the answer');
  }
  let text = '';
  let thinking = '';
  const details: ReasoningDetail[] = [];
  const calls: ToolCall[] = [];
  for (const b of msg.content as Block[]) {
    if (typeof b.text === 'string') text += b.text;
    const rd = isRecord(b.reasoningContent) ? reasoningDetail(b.reasoningContent, details.length) : undefined;
    if (rd) {
      details.push(rd);
      thinking += rd.text ?? '';
    }
    if (isRecord(b.toolUse)) calls.push(toolCall(String(b.toolUse.toolUseId), String(b.toolUse.name), b.toolUse.input));
  }
  const { stopReason, usage: u } = body as Block;
  return completion(ctx, answerText(text, calls), calls, finishOf(stopReason), bedrockUsage(u), {
    text: thinking,
    details,
  });
}
