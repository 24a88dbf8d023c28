/** OpenAI chat-completions wire types, as the gateway speaks them to clients. */

export type Role = 'system' | 'developer' | 'user' | 'assistant' | 'function' | 'tool';

export interface TextPart {
  type: 'text';
  text: string;
}
export interface ImagePart {
  type: 'image_url';
  image_url: { url: string; detail?: 'auto' | 'low' | 'high' };
}
export type ContentPart = TextPart | ImagePart | { type: string; [k: string]: unknown };

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface ChatMessage {
  role: Role;
  content: string | ContentPart[] | null;
  name?: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  function_call?: { name: string; arguments: string };
  refusal?: string | null;
  /** Reasoning text the model produced (OpenRouter's shape). */
  reasoning?: string | null;
  /** What a provider needs back on the next turn (thinking signatures, encrypted reasoning). */
  reasoning_details?: ReasoningDetail[];
  [k: string]: unknown;
}

/**
 * One piece of a model's reasoning, as OpenRouter carries it: readable text (with the
 * provider's signature), or an opaque encrypted blob. `id` ties a Gemini thoughtSignature
 * to the tool call it came with; `format` says which provider made it; `index` orders
 * the pieces (stream deltas with the same index belong together).
 */
export interface ReasoningDetail {
  type: 'reasoning.text' | 'reasoning.encrypted' | 'reasoning.summary';
  text?: string;
  signature?: string | null;
  data?: string;
  summary?: string;
  id?: string | null;
  format?: string;
  index?: number;
  [k: string]: unknown;
}

/** OpenRouter's `reasoning` request object. */
export interface ReasoningRequest {
  effort?: 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';
  max_tokens?: number;
  exclude?: boolean;
  enabled?: boolean;
}

export interface FunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

export type ToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };

/** The request body. Only `model` and `messages` are required; any other field may be sent. */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean } | null;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  min_p?: number;
  top_a?: number;
  seed?: number;
  frequency_penalty?: number;
  presence_penalty?: number;
  repetition_penalty?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  stop?: string | string[];
  n?: number;
  verbosity?: 'low' | 'medium' | 'high';
  response_format?: { type: string; json_schema?: Record<string, unknown> };
  structured_outputs?: boolean;
  tools?: FunctionTool[];
  tool_choice?: ToolChoice;
  parallel_tool_calls?: boolean;
  functions?: Array<{ name: string; description?: string; parameters?: Record<string, unknown> }>;
  function_call?: 'none' | 'auto' | { name: string };
  logit_bias?: Record<string, number>;
  logprobs?: boolean;
  top_logprobs?: number;
  user?: string;
  reasoning_effort?: ReasoningRequest['effort'];
  reasoning?: ReasoningRequest;
  [k: string]: unknown;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /**
   * cached_tokens: read from the prompt cache; cache_write_tokens: written to it (OpenRouter's names). Both are part of
   * prompt_tokens.
   */
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number; [k: string]: unknown };
  completion_tokens_details?: { reasoning_tokens?: number; [k: string]: unknown };
  /** Credits charged for the request (added by the credit plugin). */
  cost?: number;
  [k: string]: unknown;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call' | 'error';

export interface CompletionChoice {
  index: number;
  message: ChatMessage & { role: 'assistant' };
  finish_reason: FinishReason | null;
  logprobs?: unknown;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: CompletionChoice[];
  usage?: Usage;
  system_fingerprint?: string | null;
  [k: string]: unknown;
}

export interface ToolCallDelta {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface ChunkChoice {
  index: number;
  delta: {
    role?: 'assistant';
    content?: string | null;
    refusal?: string | null;
    reasoning?: string | null;
    reasoning_details?: ReasoningDetail[];
    tool_calls?: ToolCallDelta[];
    function_call?: { name?: string; arguments?: string };
    [k: string]: unknown;
  };
  finish_reason: FinishReason | null;
  logprobs?: unknown;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: ChunkChoice[];
  usage?: Usage | null;
  system_fingerprint?: string | null;
  [k: string]: unknown;
}

export interface ModelObject {
  id: string;
  object: 'model';
  created: number;
  owned_by: string;
}
