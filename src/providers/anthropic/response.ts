import { errors } from '../../errors';
import type { ChatCompletion, FinishReason, ReasoningDetail, ToolCall, Usage } from '../../types/openai';
import { completion, isRecord, usage } from '../shared';
import { answerText, encryptedDetail, textDetail, toolCall } from '../shared/answer';
import type { AdapterContext } from '../types';
import { JSON_TOOL } from './request';

/** The format name OpenRouter gives Anthropic's thinking blocks in reasoning_details. */
export const ANTHROPIC_FORMAT = 'anthropic-claude-v1';

const FINISH: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

/** A stop_reason under OpenAI's name; tool_use without a real tool call (the JSON tool) is a plain stop. */
export function finishOf(stopReason: string, hasCalls: boolean): FinishReason {
  return !hasCalls && stopReason === 'tool_use' ? 'stop' : (FINISH[stopReason] ?? 'stop');
}

/**
 * Anthropic's input_tokens excludes cache reads and writes; prompt_tokens counts all three. Writes with a one-hour
 * TTL (`cache_creation.ephemeral_1h_input_tokens`, billed 2x input where 5-minute writes are 1.25x) are also counted
 * apart, in `prompt_tokens_details.cache_write_1h_tokens` (a part of `cache_write_tokens`).
 */
export function anthropicUsage(u: Record<string, unknown> | undefined, out?: number): Usage {
  const n = (k: string) => (typeof u?.[k] === 'number' ? (u[k] as number) : 0);
  const cached = n('cache_read_input_tokens');
  const written = n('cache_creation_input_tokens');
  const result = usage(n('input_tokens') + cached + written, out ?? n('output_tokens'), cached, undefined, written);
  const creation = u?.cache_creation;
  const hour = isRecord(creation) ? creation.ephemeral_1h_input_tokens : undefined;
  if (typeof hour === 'number' && hour > 0 && result.prompt_tokens_details)
    result.prompt_tokens_details.cache_write_1h_tokens = hour;
  return result;
}

export function parseAnthropicResponse(body: unknown, ctx: AdapterContext): ChatCompletion {
  if (!isRecord(body) || !Array.isArray(body.content)) {
    throw errors.upstreamProtocol(ctx.provider ?? 'anthropic', 'no content in the answer');
  }
  let text = '';
  let thinking = '';
  const details: ReasoningDetail[] = [];
  const calls: ToolCall[] = [];
  for (const b of body.content as Array<Record<string, unknown>>) {
    if (b.type === 'text') text += String(b.text ?? '');
    else if (b.type === 'thinking') {
      thinking += String(b.thinking ?? '');
      const signature = typeof b.signature === 'string' ? b.signature : null;
      details.push(textDetail(String(b.thinking ?? ''), ANTHROPIC_FORMAT, details.length, signature));
    } else if (b.type === 'redacted_thinking') {
      details.push(encryptedDetail(String(b.data ?? ''), ANTHROPIC_FORMAT, details.length));
    } else if (b.type === 'tool_use' && b.name === JSON_TOOL) text += JSON.stringify(b.input ?? {});
    else if (b.type === 'tool_use') calls.push(toolCall(String(b.id), String(b.name), b.input));
  }
  const finish = finishOf(String(body.stop_reason ?? ''), calls.length > 0);
  const u = anthropicUsage(body.usage as Record<string, unknown>);
  return completion(ctx, answerText(text, calls), calls, finish, u, { text: thinking, details });
}
