import type { CreditBoundConfig, DeploymentConfig, ModelConfig, ProviderConfig } from '../config/types';
import { claudeOutputAllowance, reasoningAsk } from '../providers/reasoning';
import type { ChatMessage, ChatRequest, ContentPart } from '../types/openai';
import { featureCharges, type FeatureCharges } from '../models/billed-features';

/**
 * An upper bound of what one upstream attempt can count, under each provider's documented
 * counting rules. Text is bounded by its UTF-8 bytes: a byte-level BPE (OpenAI, Anthropic,
 * Mistral, Llama) or a SentencePiece tokenizer with byte fallback (Gemini) never emits more
 * tokens than bytes. Framing (per request, message, tool, response_format) is added as a
 * generous constant per provider; images, audio and files use a per-item maximum (the
 * provider's documented one, or the model's `credit_bound`), and an item with no known
 * maximum makes the prompt bound the model's context length (or a refusal, the operator's
 * choice). See plugins/credit/README.md for the table. The credit plugin prices this bound (its reservation);
 * the limits plugin reserves tokens/min with it: one rule for both.
 */
interface CountRules {
  request: number;
  message: number;
  tool: number;
  /** Text a provider adds once when tools are given (Anthropic's tool-use system prompt: 346 tokens, docs). */
  toolsBlock: number;
  responseFormat: number;
  image?: { low: number; high: number };
  audio?: number;
  file?: number;
}

// OpenAI: gpt-4o-mini's image rule is the largest documented: 2,833 tokens low, 2,833 + 8 tiles x 5,667 high.
const OPENAI: CountRules = {
  request: 8,
  message: 8,
  tool: 16,
  toolsBlock: 64,
  responseFormat: 64,
  image: { low: 2833, high: 48169 },
};
const GENERIC: CountRules = { request: 16, message: 16, tool: 32, toolsBlock: 1024, responseFormat: 128 };

const RULES: Readonly<Record<string, CountRules>> = {
  openai: OPENAI,
  azure: OPENAI,
  // Images are scaled to at most ~1.15 megapixels, about 1,600 tokens (w x h / 750).
  anthropic: {
    request: 16,
    message: 8,
    tool: 16,
    toolsBlock: 600,
    responseFormat: 128,
    image: { low: 1600, high: 1600 },
  },
  // Pixtral: 16x16 patches of at most 1024x1024 plus a break token per row: 4,160.
  mistral: { ...GENERIC, image: { low: 4160, high: 4160 } },
  // Gemini 2.x tiles a large image into any number of 258-token tiles; audio and PDFs count by duration and pages.
  gemini: GENERIC,
  // The built-in mock counts text only.
  mock: {
    request: 8,
    message: 8,
    tool: 8,
    toolsBlock: 8,
    responseFormat: 8,
    image: { low: 0, high: 0 },
    audio: 0,
    file: 0,
  },
};

export interface TokenBound {
  /** Most prompt tokens the attempt can be counted for (at most the context length). */
  input: number;
  /** Most completion tokens per choice. */
  output: number;
  n: number;
  contextLength: number;
  /** The first item with no known maximum (a param path), if any: the input bound is then the context length. */
  unbounded: string | null;
  /** The attempt may write to the cache for an hour (a `ttl: "1h"` cache_control to Claude): dearer prompt tokens. */
  hourWrites?: boolean;
  /** The priced billed features the attempt uses (web search fee, priority multiplier, audio, predictions). */
  features?: FeatureCharges;
}

/** Whether a message, content part or tool asks Claude for a one-hour cache write (`cache_control.ttl: "1h"`). */
function asksHourCache(request: ChatRequest): boolean {
  const hour = (x: unknown) =>
    x !== null && typeof x === 'object' && (x as { cache_control?: { ttl?: unknown } }).cache_control?.ttl === '1h';
  for (const list of [request.messages, request.tools]) {
    if (!Array.isArray(list)) continue;
    for (const m of list as unknown[]) {
      if (hour(m)) return true;
      const content = (m as { content?: unknown } | null)?.content;
      if (Array.isArray(content) && content.some(hour)) return true;
    }
  }
  return false;
}

const TEXT_PARTS = new Set(['text', 'input_text', 'output_text']);
const bytes = (s: unknown): number => (typeof s === 'string' ? Buffer.byteLength(s, 'utf8') : 0);

function jsonBytes(v: unknown): number {
  if (v === undefined) return 0;
  try {
    return bytes(JSON.stringify(v) ?? '');
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

interface Walk {
  rules: CountRules;
  items: CreditBoundConfig;
  unbounded: string | null;
}

function itemTokens(w: Walk, kind: 'audio' | 'file', param: string): number {
  const v = kind === 'audio' ? (w.items.audio_tokens ?? w.rules.audio) : (w.items.file_tokens ?? w.rules.file);
  if (v !== undefined) return v;
  w.unbounded ??= param;
  return 0;
}

function partTokens(w: Walk, p: ContentPart, param: string): number {
  if (!p || typeof p !== 'object') return jsonBytes(p);
  if (TEXT_PARTS.has(p.type)) return bytes((p as { text?: unknown }).text);
  if (p.type === 'refusal') return bytes((p as { refusal?: unknown }).refusal);
  if (p.type === 'image_url') {
    const image = w.items.image_tokens ?? w.rules.image;
    if (!image) return ((w.unbounded ??= param), 0);
    const detail = (p as { image_url?: { detail?: unknown } }).image_url?.detail;
    return detail === 'low' ? image.low : image.high;
  }
  if (p.type === 'input_audio') return itemTokens(w, 'audio', param);
  if (p.type === 'file') return itemTokens(w, 'file', param);
  w.unbounded ??= param;
  return 0;
}

const MESSAGE_TEXT_FIELDS = new Set(['content', 'role']);

function messageTokens(
  w: Walk,
  m: ChatMessage,
  i: number,
  roles: Record<string, { pre_message?: unknown; post_message?: unknown }> | undefined,
): number {
  if (!m || typeof m !== 'object') return jsonBytes(m);
  let n = w.rules.message + bytes(m.role);
  if (typeof m.content === 'string') n += bytes(m.content);
  else if (Array.isArray(m.content))
    m.content.forEach((p, j) => (n += partTokens(w, p, `messages[${i}].content[${j}]`)));
  // name, tool_calls, tool_call_id, function_call and anything else the message carries.
  for (const k of Object.keys(m)) if (!MESSAGE_TEXT_FIELDS.has(k)) n += jsonBytes((m as Record<string, unknown>)[k]);
  const template = roles?.[m.role];
  if (template && typeof template === 'object') n += bytes(template.pre_message) + bytes(template.post_message);
  return n;
}

/** Where an attempt goes: the adapter's own defaults (a Claude max_tokens) depend on it. */
export interface BoundTarget {
  provider: Pick<ProviderConfig, 'options'>;
  deployment: Pick<DeploymentConfig, 'model' | 'options'>;
}

/** Claude's max_tokens when a request gives none (the Anthropic and Bedrock adapters' default). */
const CLAUDE_DEFAULT_MAX = 4096;

/**
 * The output allowance the adapter itself sends where it differs from the request's: a
 * Claude request always carries max_tokens (its default when the request has none), raised
 * to fit a thinking budget; the model may produce all of it. Cohere's thinking budget may come
 * on top of max_tokens. Undefined: the request's own.
 */
function adapterOutput(
  request: ChatRequest,
  providerType: string,
  target: BoundTarget | undefined,
): number | undefined {
  if (providerType === 'anthropic') {
    const o = { ...target?.provider.options, ...target?.deployment.options };
    return claudeOutputAllowance(request, Number(o.max_tokens ?? CLAUDE_DEFAULT_MAX));
  }
  // Bedrock raises maxTokens only for Claude models with thinking on (without a target: assume Claude).
  const claude = target === undefined || /anthropic|claude/.test(target.deployment.model);
  if (providerType === 'bedrock' && claude && reasoningAsk(request)?.enabled)
    return claudeOutputAllowance(request, CLAUDE_DEFAULT_MAX);
  // Cohere's thinking token_budget is not documented to count within max_tokens: bound both.
  const ask = reasoningAsk(request);
  const max = request.max_completion_tokens ?? request.max_tokens;
  if (providerType === 'cohere' && ask?.enabled && ask.maxTokens !== undefined && typeof max === 'number')
    return max + ask.maxTokens;
  return undefined;
}

const PROMPT_TEXT_OPTIONS = ['initial_prompt_value', 'final_prompt_value', 'bos_token', 'eos_token'] as const;
const COUNTED_FIELDS = new Set(['messages', 'tools', 'functions', 'response_format']);

/**
 * The bound of one attempt: `request` as this attempt sends it, on `model`, through a
 * provider of type `providerType` (at `target`, when known); `options` are the request's
 * gateway fields (prompt templates). The output is what the upstream may produce after the
 * adapter's mapping, reasoning included.
 */
export function requestTokenBound(
  request: ChatRequest,
  model: ModelConfig,
  providerType: string,
  options: Record<string, unknown> = {},
  target?: BoundTarget,
): TokenBound {
  const w: Walk = { rules: RULES[providerType] ?? GENERIC, items: model.credit_bound ?? {}, unbounded: null };
  const roles = options.roles as Record<string, { pre_message?: unknown; post_message?: unknown }> | undefined;
  let input = w.rules.request;
  (Array.isArray(request.messages) ? request.messages : []).forEach((m, i) => (input += messageTokens(w, m, i, roles)));
  for (const list of [request.tools, request.functions]) {
    if (Array.isArray(list) && list.length > 0)
      input += w.rules.toolsBlock + list.length * w.rules.tool + jsonBytes(list);
  }
  if (request.response_format !== undefined) input += w.rules.responseFormat + jsonBytes(request.response_format);
  // Every other field (parameters, and provider-specific ones that may carry text) at its JSON size.
  for (const k of Object.keys(request)) if (!COUNTED_FIELDS.has(k)) input += jsonBytes(request[k]);
  for (const k of PROMPT_TEXT_OPTIONS) input += bytes(options[k]);
  const ctx = model.context_length;
  const asked = [request.max_tokens, request.max_completion_tokens].filter(
    (v): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0,
  );
  const sent = adapterOutput(request, providerType, target);
  const adapterSends = sent !== undefined && Number.isFinite(sent) && sent > 0 ? sent : 0;
  const features = featureCharges(request, model);
  // Rejected prediction tokens are billed as output on top of the answer: at most the prediction's bytes.
  const predicted = features.prediction ? jsonBytes((request as { prediction?: unknown }).prediction) : 0;
  const output = Math.min(
    Math.max(asked.length > 0 ? Math.max(...asked) : (model.max_output_tokens ?? ctx), adapterSends) + predicted,
    ctx,
  );
  // A lenient upstream may coerce "8" or 7.5 into a count: bound what it could make of it.
  const asN = typeof request.n === 'string' ? Number(request.n) : request.n;
  const n = typeof asN === 'number' && Number.isFinite(asN) && asN > 1 ? Math.ceil(asN) : 1;
  const claude = providerType === 'anthropic' || providerType === 'bedrock';
  return {
    input: w.unbounded !== null ? ctx : Math.min(input, ctx),
    output,
    n,
    contextLength: ctx,
    unbounded: w.unbounded,
    ...(claude && asksHourCache(request) ? { hourWrites: true } : {}),
    ...(features.perRequest > 0 || features.multiplier !== 1 || features.audio || features.prediction
      ? { features }
      : {}),
  };
}

/**
 * The largest `inputWeight * p + outputWeight * n * c` with p <= input, c <= output and
 * p + c <= context length (each choice shares the prompt's context): the best of the two vertices.
 */
export function worstCase(b: TokenBound, inputWeight: number, outputWeight: number): number {
  const ctx = b.contextLength;
  const p1 = Math.min(b.input, ctx);
  const c1 = Math.min(b.output, ctx - p1);
  const c2 = Math.min(b.output, ctx);
  const p2 = Math.min(b.input, ctx - c2);
  const at = (p: number, c: number) => inputWeight * p + outputWeight * b.n * c;
  return Math.max(at(p1, c1), at(p2, c2));
}

/**
 * The most tokens (input + every choice's output) one attempt of this request can use:
 * for token-per-minute limits. Same rules as the credit reservation, without prices.
 */
export function maxRequestTokens(
  request: ChatRequest,
  model: ModelConfig,
  providerType: string,
  options: Record<string, unknown> = {},
  target?: BoundTarget,
): number {
  return worstCase(requestTokenBound(request, model, providerType, options, target), 1, 1);
}
