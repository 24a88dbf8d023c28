import { errors, upstreamStatusError, type GatewayError } from '../../errors';
import type { ChatCompletion, ChatCompletionChunk, FinishReason, ReasoningDetail, ToolCall, Usage } from '../../types/openai';
import { chunk, completion, isRecord, ToolIndexes, usage, usageChunk, parseEventJson, reasoningChunk } from '../shared';
import type { AdapterContext, StreamTranslator, UpstreamEvent } from '../types';
import { retryAfterSeconds } from '../shared/http';
import { JSON_TOOL } from './request';

const FINISH: Record<string, FinishReason> = { end_turn: 'stop', stop_sequence: 'stop', pause_turn: 'stop', max_tokens: 'length', tool_use: 'tool_calls', refusal: 'content_filter' };

/** Anthropic's input_tokens excludes cache reads and writes; prompt_tokens counts all three. */
function anthropicUsage(u: Record<string, unknown> | undefined, out?: number): Usage {
  const n = (k: string) => (typeof u?.[k] === 'number' ? (u[k] as number) : 0);
  const cached = n('cache_read_input_tokens');
  const written = n('cache_creation_input_tokens');
  return usage(n('input_tokens') + cached + written, out ?? n('output_tokens'), cached, undefined, written);
}

/** The format name OpenRouter gives Anthropic's thinking blocks in reasoning_details. */
export const ANTHROPIC_FORMAT = 'anthropic-claude-v1';

export function parseAnthropicResponse(body: unknown, ctx: AdapterContext): ChatCompletion {
  if (!isRecord(body) || !Array.isArray(body.content)) throw errors.upstreamProtocol(ctx.provider ?? 'anthropic', 'no content in the answer');
  let text = '';
  let thinking = '';
  const details: ReasoningDetail[] = [];
  const calls: ToolCall[] = [];
  for (const b of body.content as Array<Record<string, unknown>>) {
    if (b.type === 'text') text += String(b.text ?? '');
    else if (b.type === 'thinking') {
      thinking += String(b.thinking ?? '');
      details.push({ type: 'reasoning.text', text: String(b.thinking ?? ''), signature: typeof b.signature === 'string' ? b.signature : null, format: ANTHROPIC_FORMAT, index: details.length });
    } else if (b.type === 'redacted_thinking') details.push({ type: 'reasoning.encrypted', data: String(b.data ?? ''), format: ANTHROPIC_FORMAT, index: details.length });
    else if (b.type === 'tool_use' && b.name === JSON_TOOL) text += JSON.stringify(b.input ?? {});
    else if (b.type === 'tool_use') calls.push({ id: String(b.id), type: 'function', function: { name: String(b.name), arguments: JSON.stringify(b.input ?? {}) } });
  }
  const stop = String(body.stop_reason ?? '');
  const finish = calls.length === 0 && stop === 'tool_use' ? 'stop' : FINISH[stop] ?? 'stop';
  return completion(ctx, calls.length > 0 && !text ? null : text, calls, finish, anthropicUsage(body.usage as Record<string, unknown>), { text: thinking, details });
}

export function anthropicError(provider: string, status: number, body: unknown, retryAfter?: number): GatewayError {
  const e = isRecord(body) && isRecord(body.error) ? body.error : undefined;
  const message = typeof e?.message === 'string' ? e.message : typeof body === 'string' ? body.slice(0, 300) : '';
  const code = /prompt is too long/i.test(message) ? 'context_length_exceeded' : undefined;
  // 529 overloaded_error: a 5xx, retryable.
  return upstreamStatusError(provider, status === 400 && code ? 400 : status, message, code, retryAfter);
}

export function mapAnthropicError(status: number, body: unknown, headers: Record<string, string | string[] | undefined>, provider: string): GatewayError {
  return anthropicError(provider, status, body, retryAfterSeconds(headers));
}

/** Anthropic SSE events -> OpenAI chunks, one content block at a time, tool calls keeping their own index. */
export function createAnthropicTranslator(ctx: AdapterContext): StreamTranslator {
  let done = false;
  let inputUsage: Record<string, unknown> | undefined;
  const tools = new ToolIndexes();
  const jsonBlocks = new Set<number>();
  const thinkingBlocks = new Map<number, number>(); // block index -> reasoning_details index
  const provider = ctx.provider ?? 'anthropic';
  let finish: FinishReason | null = null;
  let output = 0;
  return {
    get done() {
      return done;
    },
    push(ev: UpstreamEvent): ChatCompletionChunk[] {
      const d = parseEventJson(ev, provider) as Record<string, unknown>;
      switch (ev.event ?? d.type) {
        case 'message_start':
          inputUsage = (d.message as { usage?: Record<string, unknown> } | undefined)?.usage;
          return [chunk(ctx, { role: 'assistant', content: '' })];
        case 'content_block_start': {
          const b = d.content_block as Record<string, unknown>;
          const index = Number(d.index);
          if (b?.type === 'thinking' || b?.type === 'redacted_thinking') {
            const i = thinkingBlocks.size;
            thinkingBlocks.set(index, i);
            return b.type === 'redacted_thinking' ? reasoningChunk(ctx, '', [{ type: 'reasoning.encrypted', data: String(b.data ?? ''), format: ANTHROPIC_FORMAT, index: i }]) : [];
          }
          if (b?.type === 'tool_use' && b.name === JSON_TOOL) {
            jsonBlocks.add(index);
            return [];
          }
          if (b?.type !== 'tool_use') return [];
          const i = tools.open(index);
          return [chunk(ctx, { tool_calls: [{ index: i, id: String(b.id), type: 'function', function: { name: String(b.name), arguments: '' } }] })];
        }
        case 'content_block_delta': {
          const delta = d.delta as Record<string, unknown>;
          const index = Number(d.index);
          if (delta?.type === 'text_delta') return [chunk(ctx, { content: String(delta.text ?? '') })];
          if (delta?.type === 'thinking_delta') {
            const t = String(delta.thinking ?? '');
            return reasoningChunk(ctx, t, [{ type: 'reasoning.text', text: t, format: ANTHROPIC_FORMAT, index: thinkingBlocks.get(index) ?? 0 }]);
          }
          if (delta?.type === 'signature_delta') {
            return reasoningChunk(ctx, '', [{ type: 'reasoning.text', text: '', signature: String(delta.signature ?? ''), format: ANTHROPIC_FORMAT, index: thinkingBlocks.get(index) ?? 0 }]);
          }
          if (delta?.type === 'input_json_delta') {
            if (jsonBlocks.has(index)) return [chunk(ctx, { content: String(delta.partial_json ?? '') })];
            const i = tools.get(index);
            return i === undefined ? [] : [chunk(ctx, { tool_calls: [{ index: i, function: { arguments: String(delta.partial_json ?? '') } }] })];
          }
          return [];
        }
        case 'message_delta': {
          const stop = String((d.delta as Record<string, unknown>)?.stop_reason ?? '');
          finish = stop === 'tool_use' && tools.count === 0 ? 'stop' : FINISH[stop] ?? 'stop';
          output = Number((d.usage as Record<string, unknown> | undefined)?.output_tokens ?? 0);
          return [chunk(ctx, {}, finish)];
        }
        case 'message_stop':
          done = true;
          return [usageChunk(ctx, anthropicUsage(inputUsage, output))];
        case 'error': {
          const e = d.error as Record<string, unknown> | undefined;
          const status = e?.type === 'overloaded_error' ? 529 : e?.type === 'rate_limit_error' ? 429 : e?.type === 'invalid_request_error' ? 400 : 500;
          throw anthropicError(provider, status, d);
        }
        default:
          return []; // ping, content_block_stop
      }
    },
    finish: () => [],
  };
}
