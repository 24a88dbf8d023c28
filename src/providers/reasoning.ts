import type { ChatMessage, ChatRequest, ContentPart, FunctionTool, ReasoningDetail } from '../types/openai';
import { isRecord } from './shared';

/**
 * What a request asks of the model's reasoning, from `reasoning_effort` (OpenAI) or the
 * `reasoning` object (OpenRouter: effort, max_tokens, exclude, enabled). Undefined when
 * it asks nothing: the provider's default applies.
 */
export interface ReasoningAsk {
  enabled: boolean;
  effort?: 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';
  /** An explicit thinking budget in tokens. */
  maxTokens?: number;
  /** Think, but do not return the reasoning text. */
  exclude: boolean;
}

const EFFORTS = new Set(['minimal', 'low', 'medium', 'high', 'xhigh']);

export function reasoningAsk(req: ChatRequest): ReasoningAsk | undefined {
  const r = isRecord(req.reasoning) ? req.reasoning : undefined;
  const effort =
    typeof r?.effort === 'string'
      ? r.effort
      : typeof req.reasoning_effort === 'string'
        ? req.reasoning_effort
        : undefined;
  const maxTokens = typeof r?.max_tokens === 'number' && r.max_tokens >= 0 ? Math.floor(r.max_tokens) : undefined;
  if (!r && effort === undefined) return undefined;
  const exclude = r?.exclude === true;
  if (effort === 'none' || r?.enabled === false || maxTokens === 0) return { enabled: false, exclude };
  const ask: ReasoningAsk = { enabled: true, exclude };
  if (effort !== undefined && EFFORTS.has(effort)) ask.effort = effort as ReasoningAsk['effort'];
  if (maxTokens !== undefined) ask.maxTokens = maxTokens;
  return ask;
}

/** Share of the output allowance given to thinking per effort (OpenRouter's ratios). */
const RATIO: Record<string, number> = { xhigh: 0.95, high: 0.8, medium: 0.5, low: 0.2, minimal: 0.1 };

/**
 * A thinking budget in tokens: the explicit one, else a share of the output allowance, within 1,024..32,000
 * (Anthropic's floor).
 */
export function thinkingBudget(ask: ReasoningAsk, maxOutput: number): number {
  if (ask.maxTokens !== undefined) return Math.max(1024, ask.maxTokens);
  return Math.min(32_000, Math.max(1024, Math.floor(maxOutput * (RATIO[ask.effort ?? 'medium'] ?? 0.5))));
}

/** A Claude request's max_tokens with thinking on: the budget counts within it, so it is raised above the budget. */
export function thinkingMaxTokens(max: number, budget: number): number {
  return max <= budget ? budget + max : max;
}

/**
 * What a Claude request (Anthropic, Bedrock's Claude models) lets the model produce, thinking
 * included: the max_tokens it sends (the request's, else `defaultMax`) after the budget is fitted in.
 */
export function claudeOutputAllowance(req: ChatRequest, defaultMax: number): number {
  const max = req.max_completion_tokens ?? req.max_tokens ?? defaultMax;
  const ask = reasoningAsk(req);
  return ask?.enabled ? thinkingMaxTokens(max, thinkingBudget(ask, max)) : max;
}

/** The reasoning details of an earlier assistant turn, as the client sent them back. */
export function detailsOf(m: ChatMessage): ReasoningDetail[] {
  return Array.isArray(m.reasoning_details)
    ? m.reasoning_details.filter((d): d is ReasoningDetail => isRecord(d) && typeof d.type === 'string')
    : [];
}

/** Anthropic-style `cache_control` on a content part or on a whole message (LiteLLM's form). */
export function cacheControlOf(x: ContentPart | ChatMessage | FunctionTool): Record<string, unknown> | undefined {
  const c = (x as { cache_control?: unknown }).cache_control;
  return isRecord(c) ? c : undefined;
}

/** Reasoning text of a stream or answer, kept only when the client did not ask to exclude it. */
export function keepReasoning(req: ChatRequest): boolean {
  return reasoningAsk(req)?.exclude !== true;
}

/** An effort on a three-level scale (low, medium, high): minimal is low, xhigh is high, none given is medium. */
export function threeLevelEffort(ask: ReasoningAsk): 'low' | 'medium' | 'high' {
  return ask.effort === 'minimal' ? 'low' : ask.effort === 'xhigh' ? 'high' : (ask.effort ?? 'medium');
}
